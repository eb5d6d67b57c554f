//! What every `Thread` handle of one thread shares in a runtime (a server's, recovery's, one from
//! `open_thread`): the turn lock, which every handle takes before it runs the thread, so runs of
//! one thread take turns however many handles it has; the status and the running execution's
//! abort signal, so every handle says how the thread is and can abort its run; and the event
//! channels, so a subscriber of any handle sees the runs of all of them (a server's client sees
//! the run that recovery resumed on a handle of its own).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use hooks_core::{AbortSignal, MessageRecord};
use tokio::sync::broadcast;

use crate::events::{ThreadEvent, ThreadStatus};

/// How many events a subscriber may fall behind before it misses some.
const EVENTS_CAPACITY: usize = 256;
/// The same for text deltas, which come many per reply.
const DELTAS_CAPACITY: usize = 1024;

/// A thread's links, shared by its handles.
pub(crate) struct Links {
    /// The thread's turn.
    pub(crate) turn: tokio::sync::Mutex<()>,
    /// The thread's status and its run's abort signal.
    run: Mutex<StatusAndAbort>,
    /// Inputs this runtime committed to the thread's inbox and no run of it has taken yet, by
    /// id, with their message and time: on a store one process owns, a run takes them from
    /// here instead of reading the inbox back (see `ThreadShared::accepted_input`).
    pub(crate) accepted: Mutex<HashMap<String, (MessageRecord, i64)>>,
    /// The thread's events, `message_delta` aside.
    pub(crate) events: broadcast::Sender<ThreadEvent>,
    /// `message_delta` events: only for those who ask for them, never stored or published, and
    /// not built at all while nobody listens.
    pub(crate) deltas: broadcast::Sender<ThreadEvent>,
}

/// The thread's status, and the running execution's abort signal while a run goes.
pub(crate) struct StatusAndAbort {
    pub(crate) status: ThreadStatus,
    pub(crate) abort: Option<AbortSignal>,
}

impl Links {
    fn new(status: ThreadStatus) -> Self {
        Links {
            turn: tokio::sync::Mutex::new(()),
            run: Mutex::new(StatusAndAbort { status, abort: None }),
            accepted: Mutex::default(),
            events: broadcast::channel(EVENTS_CAPACITY).0,
            deltas: broadcast::channel(DELTAS_CAPACITY).0,
        }
    }

    /// The status and abort signal; held only for a short step, never across `.await`.
    pub(crate) fn run(&self) -> MutexGuard<'_, StatusAndAbort> {
        self.run.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The runtime's thread links by thread id; an entry lives while a handle of its thread does.
#[derive(Default)]
pub(crate) struct ThreadLinks(Mutex<ById>);

#[derive(Default)]
struct ById {
    by_thread: HashMap<String, Weak<Links>>,
    /// The size at which entries no handle holds are forgotten: twice the size after the last
    /// pruning, so pruning costs amortized constant time per new thread.
    prune_at: usize,
}

impl ThreadLinks {
    /// The links of `thread_id`: the ones its other live handles hold (whose status is the
    /// live one), or new ones with `status`, as the store has it.
    pub(crate) fn for_thread(&self, thread_id: &str, status: &ThreadStatus) -> Arc<Links> {
        let mut links = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(shared) = links.by_thread.get(thread_id).and_then(Weak::upgrade) {
            return shared;
        }
        if links.by_thread.len() >= links.prune_at {
            links.by_thread.retain(|_, shared| shared.strong_count() > 0);
            links.prune_at = (links.by_thread.len() * 2).max(64);
        }
        let shared = Arc::new(Links::new(status.clone()));
        links.by_thread.insert(thread_id.to_owned(), Arc::downgrade(&shared));
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_of_one_thread_share_links_and_forgotten_ones_are_pruned() {
        let links = ThreadLinks::default();
        let first = links.for_thread("t1", &ThreadStatus::Running);
        // A second handle opened from an older record keeps the live status.
        let second = links.for_thread("t1", &ThreadStatus::Idle);
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(second.run().status, ThreadStatus::Running);
        assert!(!Arc::ptr_eq(&first, &links.for_thread("t2", &ThreadStatus::Idle)));
        drop((first, second));
        for n in 0..1000 {
            drop(links.for_thread(&format!("other{n}"), &ThreadStatus::Idle));
        }
        let size = links.0.lock().unwrap().by_thread.len();
        assert!(size <= 130, "{size} entries kept for threads no handle holds");
    }
}
