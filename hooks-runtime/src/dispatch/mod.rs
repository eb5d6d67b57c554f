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

/// The calls of a hook point's adapters, from the kind's variants (a chain holds only hooks of
/// its kind, and the variants of one point share one signature) and the arguments it passes:
/// `call_plain`, a sync adapter's call (the hot path of a plain sync hook), `sync_of`, the sync
/// adapter of a hook known to be sync, and `call`, every hook's answer.
macro_rules! adapter_calls {
    ($lt:lifetime, [$first:ident $(| $variant:ident)*], ($($param:tt: $ty:ty),*) => ($($arg:expr),*)) => {
        type Sync = sync_adapter::$first;

        #[inline(always)]
        fn call_plain<$lt>(call: Self::Sync, $($param: $ty),*) -> HookResult<()> {
            call($($arg),*)
        }

        #[inline(always)]
        fn sync_of(handler: &HookHandler) -> Self::Sync {
            match *handler {
                HookHandler::$first(Adapter::Sync(adapter)) $(| HookHandler::$variant(Adapter::Sync(adapter)))* => adapter,
                other => unreachable!("{other:?} called as a sync {} hook", stringify!($first $(| $variant)*)),
            }
        }

        #[inline(always)]
        fn call<$lt>(handler: &HookHandler, $($param: $ty),*) -> Answer<$lt> {
            match *handler {
                HookHandler::$first(Adapter::Sync(adapter)) $(| HookHandler::$variant(Adapter::Sync(adapter)))* => {
                    Answer::Ready(adapter($($arg),*))
                }
                HookHandler::$first(Adapter::Async(adapter)) $(| HookHandler::$variant(Adapter::Async(adapter)))* => {
                    Answer::Pending(adapter($($arg),*))
                }
                other => unreachable!("{} hook in a {} chain", other.kind(), stringify!($first $(| $variant)*)),
            }
        }
    };
}

mod chain;
mod clock;
pub(crate) mod governing;
mod invoke;
mod observers;
pub(crate) mod panics;
mod plain;
mod transforms;

pub(crate) use chain::{Dispatch, FailureRule, PointRun, await_point, await_point_boxed};
pub(crate) use invoke::{HookFailure, TARGET, source_label, spans_wanted};
pub(crate) use observers::{
    after_create_message, after_subagent_created, after_thread_created, after_update_message, tool_call_done,
    tool_call_started, user_event,
};
pub(crate) use plain::{PlainChain, PlainTable};
pub(crate) use transforms::{
    after_system_message, after_tool_call, before_create_message, before_store_tool_result, before_update_message,
    filter_messages, prefilter_llm_history,
};
