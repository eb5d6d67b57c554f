//! One turn lock per thread for the whole runtime: every `Thread` handle of a thread (a server's,
//! recovery's, one from `open_thread`) takes the same lock before it runs the thread, so runs of
//! one thread take turns however many handles it has.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// The turn lock of a thread, shared by its handles.
pub(crate) type TurnLock = Arc<tokio::sync::Mutex<()>>;

/// The runtime's turn locks by thread id; an entry lives while a handle of its thread does.
#[derive(Default)]
pub(crate) struct TurnLocks(Mutex<Locks>);

#[derive(Default)]
struct Locks {
    by_thread: HashMap<String, Weak<tokio::sync::Mutex<()>>>,
    /// The size at which entries no handle holds are forgotten: twice the size after the last
    /// pruning, so pruning costs amortized constant time per new thread.
    prune_at: usize,
}

impl TurnLocks {
    /// The turn lock of `thread_id`: the one its other live handles hold, or a new one.
    pub(crate) fn for_thread(&self, thread_id: &str) -> TurnLock {
        let mut locks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lock) = locks.by_thread.get(thread_id).and_then(Weak::upgrade) {
            return lock;
        }
        if locks.by_thread.len() >= locks.prune_at {
            locks.by_thread.retain(|_, lock| lock.strong_count() > 0);
            locks.prune_at = (locks.by_thread.len() * 2).max(64);
        }
        let lock = TurnLock::default();
        locks.by_thread.insert(thread_id.to_owned(), Arc::downgrade(&lock));
        lock
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_of_one_thread_share_a_lock_and_forgotten_ones_are_pruned() {
        let locks = TurnLocks::default();
        let first = locks.for_thread("t1");
        assert!(Arc::ptr_eq(&first, &locks.for_thread("t1")));
        assert!(!Arc::ptr_eq(&first, &locks.for_thread("t2")));
        drop(first);
        for n in 0..1000 {
            drop(locks.for_thread(&format!("other{n}")));
        }
        let size = locks.0.lock().unwrap().by_thread.len();
        assert!(size <= 130, "{size} entries kept for threads no handle holds");
    }
}
