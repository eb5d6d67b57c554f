//! The in-memory store behind a test's switches: it counts `load_thread` calls (the store work a
//! request does), refuses inbox inputs while `refuse_inputs` is set, and remembers the id of
//! every input it committed.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hooks_runtime::prelude::*;
use hooks_runtime::store::{
    ApprovalStore, InMemoryStore, InboxEntry, InboxStore, InputTake, MessageStore, StoreError, ThreadRecord,
    ThreadStatus, UserValue,
};
use serde_json::Value;

#[derive(Default)]
pub(crate) struct WatchedStore {
    inner: InMemoryStore,
    /// `load_thread` calls so far.
    pub(crate) loads: AtomicUsize,
    /// While set, `enqueue_input` fails as a full disk would.
    pub(crate) refuse_inputs: AtomicBool,
    /// The ids of the inputs committed, in order.
    pub(crate) committed: Mutex<Vec<String>>,
}

#[hooks_runtime::async_trait]
impl MessageStore for WatchedStore {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        self.inner.create_thread(thread).await
    }
    async fn load_thread(&self, id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        self.inner.load_thread(id).await
    }
    async fn set_value(&self, id: &str, key: &str, value: &Value) -> Result<(), StoreError> {
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
    async fn user_values(&self, user: &str) -> Result<Vec<UserValue>, StoreError> {
        self.inner.user_values(user).await
    }
    async fn set_user_value(&self, user: &str, key: &str, value: Option<&Value>) -> Result<Option<Value>, StoreError> {
        self.inner.set_user_value(user, key, value).await
    }
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        self.inner.unsettled_threads().await
    }
    fn inbox(&self) -> Option<&dyn InboxStore> {
        Some(self)
    }
    fn approvals(&self) -> Option<&dyn ApprovalStore> {
        self.inner.approvals()
    }
}

#[hooks_runtime::async_trait]
impl InboxStore for WatchedStore {
    async fn enqueue_input(&self, id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        if self.refuse_inputs.load(Ordering::SeqCst) {
            return Err(StoreError::other("enqueue_input: the disk is full"));
        }
        self.inner.enqueue_input(id, entry).await?;
        self.committed.lock().unwrap().push(entry.id.clone());
        Ok(())
    }
    async fn pending_inputs(&self, id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        self.inner.pending_inputs(id).await
    }
    async fn take_input(&self, id: &str, take: &InputTake<'_>) -> Result<bool, StoreError> {
        self.inner.take_input(id, take).await
    }
}
