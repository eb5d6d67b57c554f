//! A message's `message_created` event reaches whoever listens once the message is stored: a
//! run hands its messages to the store uncopied when nobody listens, so a subscriber that starts
//! listening while the store writes one gets the stored message all the same.

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore, StoreError, ThreadRecord, ThreadStatus, UserValue};
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
use tokio::sync::{Notify, Semaphore};

define_prompt! { name: message_events_prompt, model: "scripted", prompt: "Reply." }
define_agent! {
    name: message_events_agent,
    side_a: { prompt: message_events_prompt, stop_on_response: true },
    side_b: { human: true },
}

/// The in-memory store, but each message insert waits for a permit of `open`, after saying it
/// started on `entered`.
struct GatedInserts {
    inner: InMemoryStore,
    entered: Notify,
    open: Semaphore,
}

#[hooks_runtime::async_trait]
impl MessageStore for GatedInserts {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        self.inner.create_thread(thread).await
    }
    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.inner.load_thread(thread_id).await
    }
    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        self.inner.set_status(thread_id, status).await
    }
    async fn hand_off(&self, id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError> {
        self.inner.hand_off(id, agent, message).await
    }
    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<(), StoreError> {
        self.entered.notify_one();
        self.open.acquire().await.expect("the gate stays open").forget();
        self.inner.insert_message(thread_id, message).await
    }
    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        self.inner.update_message(thread_id, message_id, update).await
    }
    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError> {
        self.inner.messages(thread_id).await
    }
    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        self.inner.threads_of_user(user_id).await
    }
    async fn set_value(&self, thread_id: &str, key: &str, value: &serde_json::Value) -> Result<(), StoreError> {
        self.inner.set_value(thread_id, key, value).await
    }
    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        self.inner.user_values(user_id).await
    }
    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&serde_json::Value>,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        self.inner.set_user_value(user_id, key, value).await
    }
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        self.inner.unsettled_threads().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_starts_listening_while_a_message_is_written_is_told_of_it() {
    let store = Arc::new(GatedInserts { inner: InMemoryStore::new(), entered: Notify::new(), open: Semaphore::new(0) });
    let runtime = Runtime::builder()
        .agent::<message_events_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Noted.")]))
        .store(store.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread("message_events_agent", ThreadOptions::default()).await.unwrap();
    let run = thread.clone();
    let sent = tokio::spawn(async move { run.send("Where is my order?").await });

    // The user's message is being written, and nobody listened when its write began.
    tokio::time::timeout(Duration::from_secs(10), store.entered.notified()).await.expect("the run stores the message");
    let mut events = thread.subscribe();
    // This insert, and every later one.
    store.open.add_permits(Semaphore::MAX_PERMITS / 2);
    let outcome = tokio::time::timeout(Duration::from_secs(10), sent).await.expect("the run ends").unwrap().unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Noted."));

    let mut created = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::MessageCreated { message, .. } = event {
            created.push((message.role, message.content.clone()));
        }
    }
    assert_eq!(
        created,
        [(Role::User, Some("Where is my order?".to_owned())), (Role::Assistant, Some("Noted.".to_owned()))],
        "both messages are told, the one written as the subscriber arrived included"
    );
    let stored = store.messages(thread.id()).await.unwrap();
    assert_eq!(stored.len(), 2);
}
