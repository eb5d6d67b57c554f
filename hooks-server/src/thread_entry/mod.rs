//! A thread this server serves: the one `Thread` handle, its record, and the state around it,
//! grouped by what changes together: its event stream ([`ThreadEvents`]), its accepted inputs
//! ([`InputQuota`]), the turn its runs take ([`RunGate`]) and when it was last used
//! ([`IdleClock`]).

mod idle_clock;
mod input_quota;
mod run_gate;
mod thread_events;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks_runtime::Thread;
use hooks_runtime::store::ThreadRecord;
use serde_json::Value;

use crate::dto::threads::ThreadView;
use crate::error::ApiError;

pub(crate) use idle_clock::IdleClock;
pub(crate) use input_quota::InputQuota;
pub(crate) use run_gate::RunGate;
pub(crate) use thread_events::ThreadEvents;

/// Thread entries alive in this process, every router included; see `open_thread_entries`.
static OPEN_ENTRIES: AtomicUsize = AtomicUsize::new(0);

/// How many thread entries (a thread's handle, event log and event log writer) this process
/// holds now, over every router. For tests of eviction (feature `__private`).
#[cfg(feature = "__private")]
pub fn open_thread_entries() -> usize {
    OPEN_ENTRIES.load(Ordering::Relaxed)
}

/// A thread this server knows: the one `Thread` handle (a second one would be a second run
/// lock over the same history), its owner and what the server keeps for it.
pub(crate) struct ThreadEntry {
    pub(crate) thread: Thread,
    pub(crate) record: ThreadRecord,
    pub(crate) events: ThreadEvents,
    pub(crate) inputs: InputQuota,
    pub(crate) run_gate: RunGate,
    pub(crate) idle: IdleClock,
}

impl ThreadEntry {
    pub(crate) fn new(thread: Thread, record: ThreadRecord, events: ThreadEvents) -> Self {
        OPEN_ENTRIES.fetch_add(1, Ordering::Relaxed);
        ThreadEntry {
            thread,
            record,
            events,
            inputs: InputQuota::default(),
            run_gate: RunGate::default(),
            idle: IdleClock::default(),
        }
    }

    /// Counts one more accepted input, or says why not when `limit` are already waiting.
    pub(crate) fn take_queue_slot(self: &Arc<Self>, limit: usize) -> Result<QueueSlot, ApiError> {
        self.inputs.take(limit)?;
        Ok(QueueSlot(self.clone()))
    }

    /// Whether nothing uses the entry: no request or run holds it (`holders` counts the map's
    /// own reference), no stream reads its log, nothing is queued, and it was last used more than
    /// `idle` ago.
    pub(crate) fn evictable(entry: &Arc<Self>, idle: Duration) -> bool {
        Arc::strong_count(entry) == 1
            && entry.events.log.readers() == 0
            && entry.inputs.is_empty()
            && entry.idle.unused_for(idle)
    }

    /// The thread in the API's shape: the record's identity with the live status (the store's,
    /// while a run of another process left the latest) and the last event id.
    pub(crate) fn view(&self) -> ThreadView<'_> {
        let status = match self.events.remote_status() {
            Some(status) => Some(Value::Object(status)),
            None => serde_json::to_value(self.thread.status()).ok(),
        };
        ThreadView::new(&self.record, self.thread.agent_name(), self.events.log.latest(), status)
    }
}

impl Drop for ThreadEntry {
    fn drop(&mut self) {
        OPEN_ENTRIES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One accepted input of a thread, from its 202 until its run finished; see
/// [`ThreadEntry::take_queue_slot`].
pub(crate) struct QueueSlot(Arc<ThreadEntry>);

impl Drop for QueueSlot {
    fn drop(&mut self) {
        self.0.inputs.give_back();
        self.0.idle.touch();
    }
}
