//! Thread events as a store carries them between processes: [`StoredEvent`], and the
//! [`EventSubscription`] that [`MessageStore::subscribe_events`](super::MessageStore::subscribe_events)
//! hands out.

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::StoreError;

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
