//! The state a thread's handles, its runs and its hooks share.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use hooks_core::{EnabledRelationships, MessageRecord, ThreadState};
use serde_json::Value;
use tokio::sync::broadcast;

use super::Thread;
use crate::events::ThreadEvent;
use crate::runtime::inner::{AgentEntry, RuntimeInner};
use crate::store::{StoreError, ThreadStatus};

#[derive(Default)]
pub(crate) struct Queues {
    pub(crate) messages: VecDeque<MessageRecord>,
    pub(crate) tools: VecDeque<(String, Value)>,
}

pub(crate) struct ChildThread {
    pub(crate) relationship: &'static str,
    pub(crate) thread: Thread,
}

pub(crate) struct ThreadShared {
    pub(crate) me: std::sync::Weak<ThreadShared>,
    pub(crate) id: String,
    pub(crate) runtime: Arc<RuntimeInner>,
    pub(crate) agent: RwLock<Arc<AgentEntry>>,
    pub(crate) enabled: AtomicU64,
    pub(crate) events: broadcast::Sender<ThreadEvent>,
    pub(crate) queues: Mutex<Queues>,
    /// The thread values as last written to the store (M11), read without a store round trip.
    pub(crate) values: Mutex<HashMap<String, Value>>,
    /// Held from a value's store write to its cache update, so that the cache ends in the
    /// order the store did.
    pub(crate) value_writes: tokio::sync::Mutex<()>,
    pub(crate) files: Mutex<HashMap<String, String>>,
    pub(crate) status: Mutex<ThreadStatus>,
    pub(crate) children: Mutex<Vec<ChildThread>>,
    /// The running execution's abort signal, reachable while the state is locked by the run.
    pub(crate) abort: Mutex<Option<hooks_core::AbortSignal>>,
    pub(crate) run: tokio::sync::Mutex<ThreadState>,
    /// Scale-out: the queue of events to publish through the store, in order, when the store
    /// carries them to other processes (started with the first event).
    pub(crate) publisher: std::sync::OnceLock<tokio::sync::mpsc::UnboundedSender<ThreadEvent>>,
}

impl ThreadShared {
    pub(crate) fn agent(&self) -> Arc<AgentEntry> {
        self.agent.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub(crate) fn self_arc(&self) -> Option<Arc<ThreadShared>> {
        self.me.upgrade()
    }

    pub(crate) fn enabled(&self) -> EnabledRelationships {
        EnabledRelationships::from_bits(self.enabled.load(Ordering::Acquire))
    }

    pub(crate) fn emit(&self, event: ThreadEvent) {
        if self.runtime.store.publishes_events() {
            self.publish(event.clone());
        }
        // No subscriber is not an error: events go to whoever listens at the moment.
        let _ = self.events.send(event);
    }

    /// Queues an event for the store, whose publisher task (one per thread, so the thread's
    /// events keep their order) writes it without holding up the run.
    fn publish(&self, event: ThreadEvent) {
        let sender = self.publisher.get_or_init(|| {
            let (sender, mut events) = tokio::sync::mpsc::unbounded_channel::<ThreadEvent>();
            let store = self.runtime.store.clone();
            let thread_id = self.id.clone();
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(async move {
                        while let Some(event) = events.recv().await {
                            if let Err(error) = store.publish_event(&thread_id, &event).await {
                                tracing::error!(target: "hooks_runtime::thread", thread = %thread_id, "could not publish a thread event to the store: {error}");
                            }
                        }
                    });
                }
                Err(_) => tracing::error!(target: "hooks_runtime::thread", thread = %thread_id, "thread events are not published: no tokio runtime"),
            }
            sender
        });
        let _ = sender.send(event);
    }

    /// M11: the store first, in its own transaction, then the cache; a failed write changes
    /// neither.
    pub(crate) async fn set_value(&self, key: &str, value: Value) -> Result<(), StoreError> {
        let _writing = self.value_writes.lock().await;
        self.runtime.store.set_value(&self.id, key, &value).await?;
        self.values.lock().unwrap_or_else(PoisonError::into_inner).insert(key.to_owned(), value);
        Ok(())
    }

    pub(crate) async fn set_status(&self, status: ThreadStatus) {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner) = status.clone();
        if let Err(error) = self.runtime.store.set_status(&self.id, &status).await {
            tracing::error!(target: "hooks_runtime::thread", thread = %self.id, "could not store the thread status: {error}");
        }
        self.emit(ThreadEvent::Status { status });
    }
}
