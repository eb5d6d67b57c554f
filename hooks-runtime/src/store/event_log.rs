//! The [`EventLog`] capability: thread events and user changes as a store carries them
//! between processes, the [`StoredEvent`]s it keeps and the [`EventSubscription`] that follows
//! them.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::StoreError;
use super::user_values::UserChange;
use crate::events::ThreadEvent;

/// A store's event log (O5): every event of every thread, and every user change, visible to every
/// process on the store, in the order it was published. A store that keeps one implements this
/// trait and returns itself from [`MessageStore::event_log`](super::MessageStore::event_log); the
/// runtime then hands it every event of every thread, in order, besides its in-process
/// subscribers, and every user change.
///
/// ```
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// // An in-memory store has only one process to tell.
/// assert!(InMemoryStore::new().event_log().is_none());
/// ```
#[async_trait::async_trait]
pub trait EventLog: Send + Sync {
    /// Makes these events of one thread visible to every process on the store, after the ones
    /// published before, in order; a store writes them in one transaction. Called from a task of
    /// the runtime's (never on the path of the run that emitted them) with what it found queued.
    async fn publish_events(&self, thread_id: &str, events: &[ThreadEvent]) -> Result<(), StoreError>;

    /// Follows the events that every process publishes for `thread_id` (this one's included, in
    /// the order they were stored), starting with the first one published after this call: a
    /// process that serves clients sees the runs of the others.
    async fn subscribe_events(&self, thread_id: &str) -> Result<EventSubscription, StoreError>;

    /// The `seq` ([`StoredEvent::seq`]) of the thread's last event in the store, 0 before the
    /// first: a follower of [`subscribe_events`](EventLog::subscribe_events) that has delivered
    /// up to it has seen every event published before this call.
    async fn latest_event_seq(&self, thread_id: &str) -> Result<u64, StoreError>;

    /// Makes a user change visible to every process on the store, in the order changes are
    /// published; the runtime calls it for every `set_user_value` and every thread created for
    /// a user.
    async fn publish_user_change(&self, change: &UserChange) -> Result<(), StoreError>;

    /// Every user change published from now on, by any process (this one included), in the
    /// order they were published. Listening has begun when this returns, so a change published
    /// afterwards is delivered. Dropping the receiver stops the delivery.
    async fn user_changes(&self) -> Result<mpsc::Receiver<UserChange>, StoreError>;
}

/// A thread event as stored: its thread, its place in the thread's events, and its JSON (the
/// [`ThreadEvent`](crate::ThreadEvent) shape, e.g. `{"type":"status","status":"running"}`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredEvent {
    /// The thread.
    pub thread_id: String,
    /// The event's place among the thread's events: 1, 2, 3, ... without gaps. Subscribers
    /// de-duplicate and resume by it.
    pub seq: u64,
    /// The event, as [`ThreadEvent`](crate::ThreadEvent) serializes it.
    pub event: serde_json::Value,
}

impl StoredEvent {
    /// Event `seq` of `thread_id`, as JSON: a store reading one back.
    ///
    /// ```
    /// use hooks_runtime::store::StoredEvent;
    ///
    /// let event = StoredEvent::new("t1", 1, serde_json::json!({"type": "status", "status": "running"}));
    /// assert_eq!(event.seq, 1);
    /// ```
    pub fn new(thread_id: impl Into<String>, seq: u64, event: serde_json::Value) -> Self {
        StoredEvent { thread_id: thread_id.into(), seq, event }
    }
}

/// The events of one thread, as a store delivers them. Dropping it stops the delivery (and
/// closes whatever connection the store held for it).
#[derive(Debug)]
pub struct EventSubscription {
    receiver: mpsc::Receiver<Result<StoredEvent, StoreError>>,
    task: JoinHandle<()>,
}

impl EventSubscription {
    /// A subscription that yields what `task` sends into the channel whose receiving end is
    /// `receiver`; `task` is aborted when the subscription is dropped. For store implementors.
    pub fn new(receiver: mpsc::Receiver<Result<StoredEvent, StoreError>>, task: JoinHandle<()>) -> Self {
        EventSubscription { receiver, task }
    }

    /// The next event, in `seq` order. An `Err` reports a lost connection or a failed read; the
    /// subscription goes on after it (reconnecting, then reading on from the last delivered
    /// `seq`), so nothing is skipped. `None` only once the subscription has ended.
    pub async fn next(&mut self) -> Option<Result<StoredEvent, StoreError>> {
        self.receiver.recv().await
    }
}

impl Drop for EventSubscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}
