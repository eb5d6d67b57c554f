//! Accepted means committed: `POST /threads/{id}/messages` answers 202 only once the message is
//! in the thread's inbox, with the inbox entry's id as `runId`; a store that cannot take it is a
//! 503 naming the store, and no run starts. An input that a stopped process had accepted runs
//! when the process recovers (`Runtime::recover` before serving, or the server's first request),
//! and a client of its thread sees that run.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{
    InMemoryStore, InboxEntry, InboxStore, MessageStore, StoreError, TakeStatus, ThreadRecord, ThreadStatus,
};
use hooks_runtime::{Runtime, ThreadOptions};
use hooks_server::ServerConfig;
use support::{ALICE, Server};

define_prompt! { name: durable_send_prompt, model: "scripted", prompt: "Reply." }
define_agent! {
    name: durable_send_agent,
    side_a: { prompt: durable_send_prompt, stop_on_response: true },
    side_b: { human: true },
}

/// The in-memory store, whose inbox refuses inputs while `refuse` is set, and which remembers
/// the id of every input it committed.
#[derive(Default)]
struct FlakyInbox {
    inner: InMemoryStore,
    refuse: AtomicBool,
    committed: std::sync::Mutex<Vec<String>>,
}

#[hooks_runtime::async_trait]
impl MessageStore for FlakyInbox {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        self.inner.create_thread(thread).await
    }
    async fn load_thread(&self, id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.inner.load_thread(id).await
    }
    async fn set_value(&self, id: &str, key: &str, value: &serde_json::Value) -> Result<(), StoreError> {
        self.inner.set_value(id, key, value).await
    }
    async fn set_status(&self, id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        self.inner.set_status(id, status).await
    }
    async fn hand_off(&self, id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError> {
        self.inner.hand_off(id, agent, message).await
    }
    async fn insert_message(&self, id: &str, message: &HookMessage) -> Result<(), StoreError> {
        self.inner.insert_message(id, message).await
    }
    async fn update_message(
        &self,
        id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        self.inner.update_message(id, message_id, update).await
    }
    async fn messages(&self, id: &str) -> Result<Vec<HookMessage>, StoreError> {
        self.inner.messages(id).await
    }
    async fn threads_of_user(&self, user: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        self.inner.threads_of_user(user).await
    }
    async fn user_values(&self, user: &str) -> Result<Vec<hooks_runtime::store::UserValue>, StoreError> {
        self.inner.user_values(user).await
    }
    async fn set_user_value(
        &self,
        user: &str,
        key: &str,
        value: Option<&serde_json::Value>,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        self.inner.set_user_value(user, key, value).await
    }
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        self.inner.unsettled_threads().await
    }
    fn inbox(&self) -> Option<&dyn InboxStore> {
        Some(self)
    }
}

#[hooks_runtime::async_trait]
impl InboxStore for FlakyInbox {
    async fn enqueue_input(&self, id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err(StoreError::other("enqueue_input: the disk is full"));
        }
        self.inner.enqueue_input(id, entry).await?;
        self.committed.lock().unwrap().push(entry.id.clone());
        Ok(())
    }
    async fn pending_inputs(&self, id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        self.inner.pending_inputs(id).await
    }
    async fn take_input(
        &self,
        id: &str,
        input: &str,
        message: Option<&HookMessage>,
        status: TakeStatus,
    ) -> Result<bool, StoreError> {
        self.inner.take_input(id, input, message, status).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_is_accepted_only_once_committed_and_a_store_failure_is_a_503() {
    let store = Arc::new(FlakyInbox::default());
    let runtime = Runtime::builder()
        .agent::<durable_send_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("hi")]))
        .store(store.clone())
        .build()
        .unwrap();
    let config = ServerConfig::default().catalog(vec!["durable_send_agent".into()]);
    let server = Server::start(runtime, config).await;
    let id = server.create_thread(ALICE, "durable_send_agent").await;

    let (status, accepted) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"hello"}"#).await;
    assert_eq!(status, 202, "{accepted}");
    let run_id = accepted["runId"].as_str().unwrap().to_owned();
    assert_eq!(*store.committed.lock().unwrap(), [run_id], "the run id is the committed entry's");

    store.refuse.store(true, Ordering::SeqCst);
    let (status, refused) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"lost?"}"#).await;
    assert_eq!(status, 503, "{refused}");
    let text = refused.to_string();
    assert!(text.contains("message store") && !text.contains("lost?") && !text.contains("disk"), "{text}");
    assert_eq!(store.committed.lock().unwrap().len(), 1);
}

/// A model that says it was called, then waits for `release` before it answers "recovered".
struct GatedModel {
    called: Arc<tokio::sync::Notify>,
    release: Arc<tokio::sync::Semaphore>,
}

struct OneDelta(Option<String>);

#[hooks_runtime::async_trait]
impl ModelStream for OneDelta {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        self.0.take().map(|text| Ok(ModelEvent::TextDelta(text)))
    }
}

#[hooks_runtime::async_trait]
impl Model for GatedModel {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        self.called.notify_one();
        self.release.acquire().await.expect("the gate is open").forget();
        Ok(Box::new(OneDelta(Some("recovered".into()))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_a_thread_sees_the_run_that_recovery_resumes() {
    let store = Arc::new(InMemoryStore::new());
    // A process accepted an input and stopped before its run.
    let thread_id = {
        let runtime = Runtime::builder()
            .agent::<durable_send_agent>()
            .model("scripted", ScriptedModel::new([]))
            .store(store.clone())
            .build()
            .unwrap();
        let thread = runtime.create_thread("durable_send_agent", ThreadOptions::new().user("alice")).await.unwrap();
        thread.queue_message(MessageRecord::new(Role::User, "still there?")).await.unwrap();
        thread.id().to_owned()
    };

    // The next process recovers it as it starts: the input runs on recovery's thread handle.
    let called = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Semaphore::new(0));
    let model = GatedModel { called: called.clone(), release: release.clone() };
    let runtime =
        Runtime::builder().agent::<durable_send_agent>().model("scripted", model).store(store.clone()).build().unwrap();
    // Recovered before the server takes requests, as `hooks_server::router_with` advises.
    let called_first = called.notified();
    runtime.recover().await.expect("recovery");
    let config = ServerConfig::default().catalog(vec!["durable_send_agent".into()]);
    let server = Server::start(runtime, config).await;
    tokio::time::timeout(support::PATIENCE, called_first).await.expect("recovery runs the input");

    // A client opens the thread while that run waits on the model.
    let (status, thread) = server.get(&format!("/threads/{thread_id}"), ALICE).await;
    assert_eq!(status, 200, "{thread}");
    assert_eq!(thread["status"], "running", "{thread}");
    let mut stream = server.stream(&format!("/threads/{thread_id}/events"), ALICE, None).await;
    release.add_permits(1);
    let mut replies = Vec::new();
    loop {
        let event = stream.next().await;
        match event.kind() {
            "message_created" if event.data["role"] == "assistant" => {
                replies.push(event.data["message"]["content"].clone());
            }
            "status" => {
                assert_eq!(event.data["status"], "idle", "{:?}", event.data);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(replies, ["recovered"], "the recovered run's reply is on the stream");
    let (_, thread) = server.get(&format!("/threads/{thread_id}"), ALICE).await;
    assert_eq!(thread["status"], "idle", "the thread says what its stream said: {thread}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_that_opens_no_thread_starts_the_recovery_of_an_accepted_input() {
    let store = Arc::new(InMemoryStore::new());
    let runtime = || {
        Runtime::builder().agent::<durable_send_agent>().model("scripted", ScriptedModel::new([])).store(store.clone())
    };
    // A process accepted an input and stopped before its run.
    {
        let runtime = runtime().build().unwrap();
        let thread = runtime.create_thread("durable_send_agent", ThreadOptions::new().user("alice")).await.unwrap();
        thread.queue_message(MessageRecord::new(Role::User, "still there?")).await.unwrap();
    }
    let called = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Semaphore::new(1));
    let model = GatedModel { called: called.clone(), release };
    let runtime = runtime().model("scripted", model).build().unwrap();
    let server = Server::start(runtime, ServerConfig::default()).await;
    // A request that opens no thread (the runtime would recover at its first thread) starts it.
    let (status, values) = server.get("/user/values", ALICE).await;
    assert_eq!(status, 200, "{values}");
    tokio::time::timeout(support::PATIENCE, called.notified()).await.expect("the first request starts the recovery");
}
