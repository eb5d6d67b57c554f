//! A thread's live parts, shared by its journal and event emitter: the status and the running
//! execution's abort signal; the inputs accepted here and not yet taken; and the event channels.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use hooks_core::AbortSignal;
use tokio::sync::{broadcast, mpsc};

use super::accepted_inputs::AcceptedInputs;
use crate::events::{ThreadEvent, ThreadStatus};

/// How many events a subscriber may fall behind before it misses some.
const EVENTS_CAPACITY: usize = 256;
/// The same for text deltas, which come many per reply.
const DELTAS_CAPACITY: usize = 1024;

/// A thread's links, shared by its handles.
pub(crate) struct Links {
    /// The thread's status and its run's abort signal.
    run: Mutex<StatusAndAbort>,
    /// Inputs this runtime committed to the thread's inbox and no run of it has taken yet: on a
    /// store one process owns, a run takes them from here instead of reading the inbox back
    /// (see `Journal::accept_input`).
    pub(crate) accepted: Mutex<AcceptedInputs>,
    /// The thread's events, `message_delta` aside. Made at the first subscription: tokio
    /// allocates every slot of a channel when it is made, about 26 KB for these, which an
    /// idle thread that nobody follows does not need.
    events: OnceLock<broadcast::Sender<ThreadEvent>>,
    /// `message_delta` events: only for those who ask for them, never stored or published, and
    /// not built at all while nobody listens. Made at the first subscription (about 107 KB).
    deltas: OnceLock<broadcast::Sender<ThreadEvent>>,
    /// The subscribers that never lag (`Thread::subscribe_unbounded`): each event is queued for
    /// each of them, and nothing is held while no event comes.
    unbounded: Mutex<Vec<mpsc::UnboundedSender<ThreadEvent>>>,
    /// How many `unbounded` holds, written under its lock: a thread nobody follows that way
    /// takes no lock for an event or for asking whether anyone listens.
    unbounded_len: AtomicUsize,
}

/// The thread's status, and the running execution's abort signal while a run goes.
pub(crate) struct StatusAndAbort {
    pub(crate) status: ThreadStatus,
    pub(crate) abort: Option<AbortSignal>,
    /// An abort that came while no signal was reachable (the thread waited for approvals, or a
    /// run was carrying out the decided calls of a parked step): the run's signal fires as soon
    /// as it is reachable (`Journal::arm_abort`), and the run's end forgets it.
    pub(crate) abort_requested: bool,
    /// A run of the thread goes on in this process (set when it begins, cleared when it ends).
    pub(crate) runs_here: bool,
}

impl Links {
    pub(crate) fn new(status: ThreadStatus) -> Self {
        Links {
            run: Mutex::new(StatusAndAbort { status, abort: None, abort_requested: false, runs_here: false }),
            accepted: Mutex::default(),
            events: OnceLock::new(),
            deltas: OnceLock::new(),
            unbounded: Mutex::default(),
            unbounded_len: AtomicUsize::new(0),
        }
    }

    /// A subscription to the thread's events, the channel made at the first one.
    pub(crate) fn subscribe_events(&self) -> broadcast::Receiver<ThreadEvent> {
        self.events.get_or_init(|| broadcast::channel(EVENTS_CAPACITY).0).subscribe()
    }

    /// A subscription to the reply's text deltas, the channel made at the first one.
    pub(crate) fn subscribe_deltas(&self) -> broadcast::Receiver<ThreadEvent> {
        self.deltas.get_or_init(|| broadcast::channel(DELTAS_CAPACITY).0).subscribe()
    }

    /// A subscription that never lags: the thread's events queued until read.
    pub(crate) fn subscribe_unbounded(&self) -> mpsc::UnboundedReceiver<ThreadEvent> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut unbounded = self.unbounded.lock().unwrap_or_else(PoisonError::into_inner);
        unbounded.push(sender);
        self.unbounded_len.store(unbounded.len(), Ordering::Release);
        receiver
    }

    /// Sends an event to the subscribers, if anyone ever subscribed.
    pub(crate) fn send_event(&self, event: ThreadEvent) {
        if self.unbounded_len.load(Ordering::Acquire) > 0 {
            let mut unbounded = self.unbounded.lock().unwrap_or_else(PoisonError::into_inner);
            // A subscriber that dropped its receiver is forgotten at the next event.
            unbounded.retain(|subscriber| subscriber.send(event.clone()).is_ok());
            self.unbounded_len.store(unbounded.len(), Ordering::Release);
        }
        if let Some(events) = self.events.get() {
            // No subscriber is not an error: events go to whoever listens at the moment.
            let _ = events.send(event);
        }
    }

    /// Whether anyone listens to the thread's events now.
    pub(crate) fn events_followed(&self) -> bool {
        self.events.get().is_some_and(|events| events.receiver_count() > 0)
            || self.unbounded_len.load(Ordering::Acquire) > 0
    }

    /// Whether anyone listens to the text deltas now.
    pub(crate) fn deltas_followed(&self) -> bool {
        self.deltas.get().is_some_and(|deltas| deltas.receiver_count() > 0)
    }

    /// Sends a text delta to its subscribers.
    pub(crate) fn send_delta(&self, event: ThreadEvent) {
        if let Some(deltas) = self.deltas.get() {
            let _ = deltas.send(event);
        }
    }

    /// The status and abort signal; held only for a short step, never across `.await`.
    pub(crate) fn run(&self) -> MutexGuard<'_, StatusAndAbort> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
