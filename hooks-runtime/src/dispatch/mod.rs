//! Hook dispatch: a resolved chain run in order, each hook under its timeout with panics
//! caught, and each hook point's error rule in one place.
//!
//! Nothing here looks a hook up by name, takes a lock or clones a definition: a chain is a slice
//! of resolved entries and an entry's adapter is a fn pointer. A transform chain runs on one
//! `&mut` value (see `hooks_core::__private::HookHandler`); a sync hook is a plain call that
//! creates no future and answers in a register; an entry tells with one flag, computed at
//! resolution, whether it is a plain sync hook that needs no other test; whether hook spans are
//! wanted is asked once per chain; and a snapshot of the value is taken only before a hook that
//! moves it (a by-value hook), to restore it if that hook fails.

/// The two calls of a hook point's adapters, from the kind's variants (a chain holds only hooks
/// of its kind) and the arguments it passes: `call_sync`, the hot path of a plain sync hook,
/// and `call`, every hook's answer.
macro_rules! adapter_calls {
    ($lt:lifetime, [$($variant:ident)|+], ($($param:tt: $ty:ty),*) => ($($arg:expr),*)) => {
        #[inline(always)]
        fn call_sync<$lt>(handler: &HookHandler, $($param: $ty),*) -> HookResult<()> {
            match *handler {
                $(HookHandler::$variant(Adapter::Sync(adapter)))|+ => adapter($($arg),*),
                other => unreachable!("{other:?} called as a sync {} hook", stringify!($($variant)|+)),
            }
        }

        #[inline(always)]
        fn call<$lt>(handler: &HookHandler, $($param: $ty),*) -> Answer<$lt> {
            match *handler {
                $(HookHandler::$variant(Adapter::Sync(adapter)))|+ => Answer::Ready(adapter($($arg),*)),
                $(HookHandler::$variant(Adapter::Async(adapter)))|+ => Answer::Pending(adapter($($arg),*)),
                other => unreachable!("{} hook in a {} chain", other.kind(), stringify!($($variant)|+)),
            }
        }
    };
}

mod clock;
mod events;
pub(crate) mod governing;
mod invoke;
mod kinds;
pub(crate) mod panics;
mod plain;

use std::future::Future;
use std::time::Duration;

use hooks_core::__private::{EnabledRelationships, ResolvedHook};

pub(crate) use events::{
    after_create_message, after_subagent_created, after_thread_created, after_update_message, tool_call_done,
    tool_call_started, user_event,
};
pub(crate) use invoke::{HookFailure, TARGET, source_label, spans_wanted};
pub(crate) use kinds::{
    after_system_message, after_tool_call, before_create_message, before_store_tool_result, before_update_message,
    filter_messages, prefilter_llm_history,
};
pub(crate) use plain::{PlainChain, PlainTable};

/// One chain ready to run: its entries, its typed form when every hook of it is a plain sync
/// hook, the enabled optional relationships, the default timeout.
#[derive(Clone, Copy)]
pub(crate) struct Dispatch<'c> {
    pub(crate) chain: &'c [ResolvedHook],
    pub(crate) plain: Option<&'c PlainChain>,
    pub(crate) enabled: EnabledRelationships,
    pub(crate) default_timeout: Duration,
}

impl Dispatch<'_> {
    /// Whether the chain has no hook; call sites check it before building anything, so an empty
    /// chain costs a length check.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.chain.is_empty()
    }

    /// The timeout of one entry: its own `timeout_ms`, else the runtime's default.
    #[inline]
    pub(crate) fn timeout_of(&self, entry: &ResolvedHook) -> Duration {
        entry.hook.timeout_ms.map_or(self.default_timeout, Duration::from_millis)
    }
}

/// A hook point, called: the sync hooks of its chain have run, up to its end or its first async
/// hook.
///
/// `Finished` holds the point's outcome; `Suspended` is the rest of the chain, a future that the
/// caller awaits where it called the point ([`await_point!`]), so that it lives in the caller's
/// own state and needs no allocation. A chain of sync hooks thus builds no future and moves
/// nothing: its value is changed in place, behind the `&mut` the point was given.
#[must_use = "a suspended hook point runs the rest of its chain only when awaited"]
pub(crate) enum PointRun<F: Future> {
    /// The chain ran to its end (or a failure stopped it): the point's outcome.
    Finished(F::Output),
    /// The chain reached an async hook (or spans are wanted): the rest of it.
    Suspended(F),
}

/// Awaits a hook point where it is called: `await_point!(dispatch::filter_messages(..))` is the
/// point's outcome. In an `async` context only.
macro_rules! await_point {
    ($point:expr) => {
        match $point {
            $crate::dispatch::PointRun::Finished(outcome) => outcome,
            $crate::dispatch::PointRun::Suspended(rest) => rest.await,
        }
    };
}
pub(crate) use await_point;

/// What a failing hook does to the value its chain carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureRule {
    /// E1, M9: log and go on with the last good value.
    KeepLastGood,
    /// M2, M4: the first failure prevents the write; the remaining hooks do not run.
    Prevent,
    /// R7: a `block: true` error stops the step; any other failure keeps the last good value.
    BlockOrKeepLastGood,
}
