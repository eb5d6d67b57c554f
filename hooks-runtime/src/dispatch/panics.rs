//! Hook panics: caught as the hook's failure (E4), reported by location only, and kept out of
//! the process's panic output.
//!
//! Rust prints a panic's message through the process-wide panic hook before `catch_unwind`
//! returns, and a hook's panic message may carry the contents it was given. [`install`] wraps
//! whatever panic hook the application has set, once, when a runtime is built: while a hook runs
//! on the current thread, a panic's location is recorded for the `[Hooks] ✗` line and nothing is
//! printed; every other panic goes to the application's hook unchanged. An application that sets
//! its own panic hook after building a runtime replaces the wrapper, and then hook panics print
//! through its hook as any panic does; they are still caught.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use futures_util::FutureExt;

thread_local! {
    /// Whether a hook is running on this thread (nested hooks keep it set).
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
    /// Where the last hook panic on this thread happened, `file:line:column`.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Wraps the process's panic hook so hook panics are recorded and not printed. Idempotent.
pub(crate) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_HOOK.with(Cell::get) {
                let location = info.location().map(|at| format!("{}:{}:{}", at.file(), at.line(), at.column()));
                LOCATION.with(|slot| *slot.borrow_mut() = location);
            } else {
                previous(info);
            }
        }));
    });
}

/// Where a caught hook panic happened, when the panic hook could tell.
#[derive(Debug)]
pub(crate) struct PanicLocation(pub(crate) Option<String>);

impl std::fmt::Display for PanicLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(location) => write!(f, "panicked at {location}"),
            None => f.write_str("panicked"),
        }
    }
}

/// Runs `f` as hook code: a panic is caught and answered with its location; its payload is
/// dropped unread.
#[inline(always)]
pub(crate) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, PanicLocation> {
    let in_hook = enter();
    catch_entered(&in_hook, f)
}

/// Awaits `future` as hook code: each poll is marked as [`catch`] marks a call, so a panic in
/// any poll ends it with the panic's location, unprinted; the payload is dropped unread.
pub(crate) async fn catch_future<F: Future>(future: F) -> Result<F::Output, PanicLocation> {
    let mut future = std::pin::pin!(future);
    // The mark is per poll, not across the awaits: between polls other tasks run on the thread.
    let marked = std::future::poll_fn(move |cx| {
        let _in_hook = enter();
        future.as_mut().poll(cx)
    });
    AssertUnwindSafe(marked).catch_unwind().await.map_err(located)
}

/// Marks this thread as running hook code until dropped. A chain's run of sync hooks marks it
/// once for all of them ([`catch_entered`]); nothing in that run awaits, so no other task's code
/// runs on the thread while it is set.
pub(crate) struct InHook {
    outer: bool,
}

/// Marks this thread as running hook code.
#[inline(always)]
pub(crate) fn enter() -> InHook {
    InHook { outer: IN_HOOK.with(|flag| flag.replace(true)) }
}

impl Drop for InHook {
    #[inline(always)]
    fn drop(&mut self) {
        IN_HOOK.with(|flag| flag.set(self.outer));
    }
}

/// [`catch`] for a thread already marked by `_in_hook`.
#[inline(always)]
pub(crate) fn catch_entered<R>(_in_hook: &InHook, f: impl FnOnce() -> R) -> Result<R, PanicLocation> {
    catch_unwind(AssertUnwindSafe(f)).map_err(located)
}

#[cold]
fn located(payload: Box<dyn std::any::Any + Send>) -> PanicLocation {
    drop(payload);
    PanicLocation(LOCATION.with(|slot| slot.borrow_mut().take()))
}
