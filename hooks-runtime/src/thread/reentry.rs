//! E8: what the current task is doing to which thread, so that a hook calling back into its own
//! thread can be bounded or refused instead of overflowing the stack or deadlocking.
//!
//! Two facts are kept per thread: whether this task holds the thread's run (a hook that waits
//! for it would wait for itself), and how many hook calls back into the thread
//! (`state.inject_message`, `state.update_message`) are nested here, with the hook point the
//! innermost one is running. They are task-local and scoped: a hook runs inside the task of the
//! operation that called it, so it sees the scopes of every operation around it, and two
//! operations of one task running side by side (`join`) each see only their own.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use hooks_core::HookKind;

use super::ThreadShared;
use crate::limits::MAX_HOOK_DEPTH;

tokio::task_local! {
    static SCOPES: Scopes;
}

/// One entry per thread this task works on; a few at most (a thread and its subagents).
#[derive(Clone, Default)]
struct Scopes(Arc<[Entry]>);

#[derive(Clone)]
struct Entry {
    /// The thread, by the address of its links (every handle of one thread shares them):
    /// unique while the scope borrows the thread.
    thread: usize,
    holds_run: bool,
    depth: u32,
    /// Inside a nested call, the hook point its pipeline is running, noted by the pipeline as
    /// it goes (a plain write, no scope: scoping each chain would deepen every level's stack).
    point: Option<Arc<Mutex<Option<HookKind>>>>,
}

fn key(shared: &ThreadShared) -> usize {
    shared.turn_key()
}

fn with_current<T>(shared: &ThreadShared, read: impl FnOnce(&Entry) -> T) -> Option<T> {
    let thread = key(shared);
    SCOPES.try_with(|scopes| scopes.0.iter().find(|entry| entry.thread == thread).map(read)).ok().flatten()
}

/// The current scopes with the entry of `shared` changed by `change`.
fn with_entry(shared: &ThreadShared, change: impl FnOnce(&mut Entry)) -> Scopes {
    let thread = key(shared);
    let current = SCOPES.try_with(|scopes| scopes.0.clone()).unwrap_or_default();
    let mut change = Some(change);
    let changed = |mut entry: Entry| {
        if entry.thread == thread
            && let Some(change) = change.take()
        {
            change(&mut entry);
        }
        entry
    };
    // Collected from iterators of known length, the new scopes are one allocation.
    let entries: Arc<[Entry]> = if current.iter().any(|entry| entry.thread == thread) {
        current.iter().cloned().map(changed).collect()
    } else {
        let new = Entry { thread, holds_run: false, depth: 0, point: None };
        current.iter().cloned().chain(std::iter::once(new)).map(changed).collect()
    };
    Scopes(entries)
}

/// Whether this task holds the run of `shared`: waiting for it here would never end.
pub(crate) fn holds_run(shared: &ThreadShared) -> bool {
    with_current(shared, |entry| entry.holds_run).unwrap_or(false)
}

/// Runs `operation`, which takes the run of `shared`, marked as holding it; the mark is made
/// here, in the calling task, which awaits the answer at once.
///
/// Not an `async fn`: one would keep `operation` as its argument and again inside the scope's
/// future, twice its size, and copy it from one to the other; a run's future is tens of KB.
pub(crate) fn holding_run<F: Future>(shared: &ThreadShared, operation: F) -> impl Future<Output = F::Output> {
    SCOPES.scope(with_entry(shared, |entry| entry.holds_run = true), operation)
}

/// A hook call back into a thread that went past [`MAX_HOOK_DEPTH`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct TooDeep {
    /// The hook point the refused call came from.
    pub(crate) point: Option<HookKind>,
}

/// A hook's call back into `shared`, one level deeper than the caller, or its refusal past the
/// limit. Run it with [`Nested::run`].
pub(crate) struct Nested(Scopes);

impl Nested {
    pub(crate) fn enter(shared: &ThreadShared) -> Result<Nested, TooDeep> {
        let (depth, point) = with_current(shared, |entry| (entry.depth, entry.point.clone())).unwrap_or((0, None));
        if depth >= MAX_HOOK_DEPTH {
            let point = point.and_then(|point| *point.lock().unwrap_or_else(PoisonError::into_inner));
            return Err(TooDeep { point });
        }
        Ok(Nested(with_entry(shared, |entry| {
            entry.depth = depth + 1;
            entry.point = Some(Arc::default());
        })))
    }

    /// Runs the call. It is boxed so that each nesting level keeps only a pointer to the next:
    /// the levels' futures are polled one inside another, on one stack.
    pub(crate) async fn run<T>(self, call: Pin<Box<dyn Future<Output = T> + Send + '_>>) -> T {
        SCOPES.scope(self.0, call).await
    }
}

/// Notes that the pipeline of a nested call is about to run the chain of `point`, so that a
/// refusal can name it. Outside a nested call, nothing is noted.
pub(crate) fn note_point(shared: &ThreadShared, point: HookKind) {
    if let Some(Some(slot)) = with_current(shared, |entry| entry.point.clone()) {
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(point);
    }
}
