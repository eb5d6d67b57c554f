//! The task that fills a thread's event log: the runtime's events of this process, the server's
//! own events (runs starting and finishing, hook runs) in their place among them, and, when the
//! store carries events between processes, the events of runs in other processes.
//!
//! With such a store ([`MessageStore::publishes_events`]) every event of this process also comes
//! back through the store, after the fact. This process's events are logged as soon as the
//! runtime emits them (so the server's own events keep their place) and remembered; an event
//! from the store that is the oldest remembered one is its echo and is dropped, any other is
//! another process's. The store keeps each process's events in their order, so the echoes come
//! in the order they were remembered. Two events with the same JSON (two `status: running`
//! from two processes a moment apart) may swap places; none is lost or shown twice.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hooks_runtime::ThreadEvent;
use hooks_runtime::store::{EventSubscription, StoredEvent};
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::event_log::EventLog;

/// How long an event of this process waits for its echo from the store; one that never comes
/// (the runtime could not publish it, and logged so) stops being waited for after this.
const ECHO_WAIT: Duration = Duration::from_secs(60);

/// A message to a thread's pump from the server itself.
pub(crate) enum ServerEvent {
    /// Log this event once every runtime event before it is logged, then say so.
    Ordered(Value, Option<oneshot::Sender<()>>),
}

/// The status another process's run left the thread in, while it is the latest status event;
/// `None` while the latest one is this process's (the thread handle knows it then).
pub(crate) type RemoteStatus = Arc<Mutex<Option<Map<String, Value>>>>;

/// What a pump reads and where it writes.
pub(crate) struct Pump {
    pub(crate) thread_id: String,
    pub(crate) runtime_events: broadcast::Receiver<ThreadEvent>,
    pub(crate) server_events: mpsc::UnboundedReceiver<ServerEvent>,
    /// The store's events of this thread, from every process; `None` for a store of one process.
    pub(crate) store_events: Option<EventSubscription>,
    pub(crate) log: Arc<EventLog>,
    pub(crate) remote_status: RemoteStatus,
}

impl Pump {
    /// Runs until the thread's runtime events end.
    pub(crate) async fn run(mut self) {
        // This process's events, as the store will give them back, oldest first.
        let mut awaiting_echo: VecDeque<(Value, Instant)> = VecDeque::new();
        loop {
            tokio::select! {
                // Runtime events first: an event the runtime emitted before a server event was
                // sent is already in this channel when the server event is looked at.
                biased;
                received = self.runtime_events.recv() => match received {
                    Ok(event) => {
                        let value = serde_json::to_value(&event).unwrap_or_else(|_| json!({ "type": "unserializable_event" }));
                        self.log.push(&value);
                        if matches!(event, ThreadEvent::Status { .. }) {
                            *self.remote_status.lock().unwrap_or_else(PoisonError::into_inner) = None;
                        }
                        if self.store_events.is_some() {
                            awaiting_echo.push_back((as_stored(&value), Instant::now()));
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(target: "hooks_server", thread = %self.thread_id, missed, "the event log fell behind the thread");
                        // With a store that carries events, the missed ones come back from it
                        // (nothing awaits their echo), so nothing is lost.
                        if self.store_events.is_none() {
                            self.log.push(&crate::event_log::events_lost(missed));
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                Some(ServerEvent::Ordered(value, done)) = self.server_events.recv() => {
                    self.log.push(&value);
                    if let Some(done) = done {
                        let _ = done.send(());
                    }
                }
                stored = next_stored(&mut self.store_events) => match stored {
                    Some(Ok(stored)) => self.stored(stored, &mut awaiting_echo),
                    Some(Err(error)) => {
                        // The subscription reconnects and reads on from its last event itself.
                        tracing::warn!(target: "hooks_server", thread = %self.thread_id, "following the store's events: {error}");
                    }
                    None => {
                        tracing::warn!(target: "hooks_server", thread = %self.thread_id, "the store's event subscription ended; runs of other processes no longer show");
                        self.store_events = None;
                        awaiting_echo.clear();
                    }
                },
            }
        }
    }

    /// An event from the store: this process's own, coming back (dropped), or another's (logged).
    fn stored(&self, stored: StoredEvent, awaiting_echo: &mut VecDeque<(Value, Instant)>) {
        while awaiting_echo.front().is_some_and(|(_, at)| at.elapsed() > ECHO_WAIT) {
            awaiting_echo.pop_front();
        }
        if awaiting_echo.front().is_some_and(|(value, _)| *value == stored.event) {
            awaiting_echo.pop_front();
            return;
        }
        self.log.push(&stored.event);
        if stored.event["type"] == "status"
            && let Value::Object(mut status) = stored.event
        {
            status.remove("type");
            *self.remote_status.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
        }
    }
}

/// The next event of the subscription, or never when there is none.
async fn next_stored(
    subscription: &mut Option<EventSubscription>,
) -> Option<Result<StoredEvent, hooks_runtime::store::StoreError>> {
    match subscription {
        Some(subscription) => subscription.next().await,
        None => std::future::pending().await,
    }
}

/// The event as a store gives it back: its JSON text read again, so that numbers compare as
/// the echo's do.
fn as_stored(value: &Value) -> Value {
    serde_json::from_str(&value.to_string()).unwrap_or(Value::Null)
}
