//! The runtime's map of live threads: one live state per thread id (O1), so every handle of a
//! thread (a server's, recovery's, one from `open_thread`) is the same thread: a handoff, a
//! value or an abort through one is seen through all, and a subscriber of any sees every run, a
//! recovered one's included.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// The runtime's live threads by id (O1): one shared state per thread in a process (`T`, the
/// thread's `ThreadShared`), held by its `Thread` handles, here only weakly, so that a thread
/// no handle holds is gone. The runtime's handle holds the map, and so does every thread's
/// shared state (a subagent's child thread joins it), as `LiveThreads<ThreadShared>`; generic
/// so that this file needs nothing of the state it maps, which holds the map in turn.
pub(crate) struct LiveThreads<T>(Mutex<ById<T>>);

impl<T> Default for LiveThreads<T> {
    fn default() -> Self {
        LiveThreads(Mutex::new(ById { by_thread: HashMap::new(), prune_at: 0 }))
    }
}

struct ById<T> {
    by_thread: HashMap<String, Weak<T>>,
    /// The size at which entries no handle holds are forgotten: twice the size after the last
    /// pruning, so pruning costs amortized constant time per new thread.
    prune_at: usize,
}

impl<T> LiveThreads<T> {
    /// The live state of `thread_id`, if a handle of it lives.
    pub(crate) fn get(&self, thread_id: &str) -> Option<Arc<T>> {
        let live = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        live.by_thread.get(thread_id).and_then(Weak::upgrade)
    }

    /// The live state of `thread_id`, or `make()`'s, kept as its live state from now on: of two
    /// opens of one thread at once, both get the same state.
    pub(crate) fn get_or_insert(&self, thread_id: &str, make: impl FnOnce() -> Arc<T>) -> Arc<T> {
        let mut live = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(thread) = live.by_thread.get(thread_id).and_then(Weak::upgrade) {
            return thread;
        }
        if live.by_thread.len() >= live.prune_at {
            live.by_thread.retain(|_, thread| thread.strong_count() > 0);
            live.prune_at = (live.by_thread.len() * 2).max(64);
        }
        let thread = make();
        live.by_thread.insert(thread_id.to_owned(), Arc::downgrade(&thread));
        thread
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_state_per_thread_and_forgotten_ones_are_pruned() {
        let live = LiveThreads::<u32>::default();
        let first = live.get_or_insert("t1", || Arc::new(1_u32));
        let second = live.get_or_insert("t1", || Arc::new(2_u32));
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(live.get("t1").as_deref(), Some(&1));
        assert!(!Arc::ptr_eq(&first, &live.get_or_insert("t2", || Arc::new(1_u32))));
        drop((first, second));
        assert!(live.get("t1").is_none(), "a thread no handle holds is gone");
        for n in 0..1000 {
            drop(live.get_or_insert(&format!("other{n}"), || Arc::new(n)));
        }
        let size = live.0.lock().unwrap().by_thread.len();
        assert!(size <= 130, "{size} entries kept for threads no handle holds");
    }
}
