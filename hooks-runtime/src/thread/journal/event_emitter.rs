//! A thread's events: to the subscribers of every handle of the thread in this runtime and,
//! when the store carries events to other processes, through the store, in order.

use std::sync::{Arc, OnceLock};

use tokio::sync::broadcast;

use super::publisher::Publisher;
use crate::events::ThreadEvent;
use crate::store::MessageStore;
use crate::thread::links::Links;

pub(crate) struct EventEmitter {
    thread_id: String,
    store: Arc<dyn MessageStore>,
    /// The thread's event channels, shared with every other handle of it in this runtime.
    links: Arc<Links>,
    /// Scale-out: the queue of events to publish through the store, in order, when the store
    /// carries them to other processes (started with the first event).
    publisher: OnceLock<Publisher>,
}

impl EventEmitter {
    pub(crate) fn new(thread_id: String, store: Arc<dyn MessageStore>, links: Arc<Links>) -> Self {
        EventEmitter { thread_id, store, links, publisher: OnceLock::new() }
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ThreadEvent> {
        self.links.subscribe_events()
    }

    pub(crate) fn subscribe_unbounded(&self) -> tokio::sync::mpsc::UnboundedReceiver<ThreadEvent> {
        self.links.subscribe_unbounded()
    }

    pub(crate) fn subscribe_deltas(&self) -> broadcast::Receiver<ThreadEvent> {
        self.links.subscribe_deltas()
    }

    /// A piece of the reply's text as it streams, to the delta subscribers only; with none, the
    /// event is not even built.
    pub(crate) fn emit_delta(&self, step: u32, delta: &str) {
        if !self.links.deltas_followed() {
            return;
        }
        self.links.send_delta(ThreadEvent::MessageDelta { step, delta: delta.to_owned() });
    }

    /// [`emit`](Self::emit) of the event `build` makes, made only when it goes somewhere: to the
    /// store, or to a subscriber listening now. A turn nobody follows builds none of its events.
    pub(crate) fn emit_with(&self, build: impl FnOnce() -> ThreadEvent) {
        if self.goes_somewhere() {
            self.emit(build());
        }
    }

    /// Whether an event emitted now goes somewhere: to the store, or to a subscriber.
    pub(crate) fn goes_somewhere(&self) -> bool {
        self.store.event_log().is_some() || self.links.events_followed()
    }

    pub(crate) fn emit(&self, event: ThreadEvent) {
        if self.store.event_log().is_some() {
            self.publish(event.clone());
        }
        self.links.send_event(event);
    }

    /// Queues an event for the store, whose publisher task (one per thread, so the thread's
    /// events keep their order) writes it without holding up the run.
    fn publish(&self, event: ThreadEvent) {
        self.publisher.get_or_init(|| Publisher::start(self.store.clone(), self.thread_id.clone())).send(event);
    }

    /// Waits until every event emitted so far is published through the store (or failed to be):
    /// a run's events are all in before its permit to run the thread is released.
    pub(crate) async fn flush_published(&self) {
        if let Some(publisher) = self.publisher.get() {
            publisher.flush().await;
        }
    }
}
