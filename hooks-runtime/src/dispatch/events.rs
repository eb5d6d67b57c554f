//! The event hook points: each hook observes, and a failure is logged and changes nothing else
//! (E2).
//!
//! As for transforms (`kinds.rs`), the sync hooks up to the first async one run when a point is
//! called, in a plain function: a chain of sync hooks builds no state machine. From an async hook
//! on (or when hook spans are wanted) the rest of the chain is a future the caller awaits in place.

use std::future::Future;

use hooks_core::{
    HookExecutionContext, HookFuture, HookHandler, HookMessage, HookResult, HookToolCall, HookToolResult,
    MessageRecord, ResolvedHook, ThreadState, UserState,
};

use super::invoke::{self, HookFailure, Started, spans_wanted};
use super::panics;
use super::{Dispatch, PointRun};

/// An event hook point: what its hooks are given, and how its adapter is called.
trait EventKind: 'static {
    /// The point's arguments, borrowed for the chain.
    type Args<'a>: Copy + Send + Sync;
    fn call<'a>(
        handler: &HookHandler,
        args: Self::Args<'a>,
        ctx: &'a HookExecutionContext,
    ) -> HookFuture<'a, HookResult<()>>;
}

/// Runs an event chain: its sync hooks now, the rest (from an async hook on) in the future
/// answered, which the caller awaits where it calls the point.
#[inline(always)]
fn run_events<'a, E: EventKind>(
    dispatch: Dispatch<'a>,
    args: E::Args<'a>,
) -> PointRun<impl Future<Output = ()> + Send + 'a> {
    if dispatch.is_empty() {
        return PointRun::Finished(());
    }
    let traced = spans_wanted();
    let from = if traced {
        0
    } else {
        match run_sync::<E>(&dispatch, args, 0) {
            Some(position) => position,
            None => return PointRun::Finished(()),
        }
    };
    PointRun::Suspended(resume::<E>(dispatch, args, from, traced))
}

/// Runs the sync hooks from `from` on, up to the end (`None`) or the next async hook (its
/// position). Never inlined, so that its loop state stays out of any future.
#[inline(never)]
fn run_sync<'a, E: EventKind>(dispatch: &Dispatch<'a>, args: E::Args<'a>, from: usize) -> Option<usize> {
    let in_hook = panics::enter();
    let chain = dispatch.chain.get(from..).unwrap_or_default();
    for (offset, entry) in chain.iter().enumerate() {
        let def = entry.hook;
        if def.is_async | def.blocking | entry.optional_slot.is_some() {
            if !entry.is_active(&dispatch.enabled) {
                continue;
            }
            if def.is_async {
                return Some(from + offset);
            }
        }
        let outcome = if def.blocking {
            match invoke::start(entry, dispatch.timeout_of(entry), || E::call(&def.handler, args, &entry.context)) {
                Started::Done(outcome) => outcome,
                Started::Pending(_) => Err(not_async(entry)),
            }
        } else {
            match panics::catch_entered(&in_hook, || E::call(&def.handler, args, &entry.context)) {
                Ok(HookFuture::Ready(Ok(()))) => continue,
                Ok(HookFuture::Ready(Err(error))) => Err(HookFailure::Error(error)),
                Ok(HookFuture::Pending(_)) => Err(not_async(entry)),
                Err(location) => Err(HookFailure::Panic(location)),
            }
        };
        if let Err(failure) = outcome {
            // E2: an event hook's failure is logged and changes nothing else.
            invoke::log_failure(entry, &failure);
        }
    }
    None
}

/// A hook defined as sync whose adapter answered a future: its future is dropped unpolled.
#[cold]
fn not_async(entry: &ResolvedHook) -> HookFailure {
    super::kinds::not_async(entry)
}

/// The rest of an event chain from position `from` (an async hook), or the whole chain with
/// each hook in its span when `traced`.
async fn resume<'a, E: EventKind>(dispatch: Dispatch<'a>, args: E::Args<'a>, from: usize, traced: bool) {
    if traced {
        // Boxed: the traced chain's state (a span per hook) stays out of the untraced future.
        return Box::pin(run_traced::<E>(dispatch, args)).await;
    }
    let mut clock = invoke::HookClock::default();
    let mut position = from;
    loop {
        let entry = &dispatch.chain[position];
        let timeout = dispatch.timeout_of(entry);
        let outcome = match invoke::start(entry, timeout, || E::call(&entry.hook.handler, args, &entry.context)) {
            Started::Done(outcome) => outcome,
            Started::Pending(future) => invoke::InFlight::new(future, timeout, None, &mut clock, position).await,
        };
        if let Err(failure) = outcome {
            invoke::log_failure(entry, &failure);
        }
        position += 1;
        match dispatch.chain.get(position) {
            None => return,
            Some(next) if next.hook.is_async && next.optional_slot.is_none() => continue,
            Some(_) => {}
        }
        match run_sync::<E>(&dispatch, args, position) {
            Some(next) => position = next,
            None => return,
        }
    }
}

/// An event chain when someone listens for hook spans: each hook in its span.
#[cold]
async fn run_traced<'a, E: EventKind>(dispatch: Dispatch<'a>, args: E::Args<'a>) {
    for entry in dispatch.chain {
        if !entry.is_active(&dispatch.enabled) {
            continue;
        }
        let call = || E::call(&entry.hook.handler, args, &entry.context);
        if let Err(failure) = invoke::run_traced(entry, dispatch.timeout_of(entry), call).await {
            invoke::log_failure(entry, &failure);
        }
    }
}

macro_rules! event_point {
    ($(#[$doc:meta])* $name:ident, $marker:ident, |$handler:ident, ($($arg:ident: $ty:ty),*), $ctx:ident| $call:expr) => {
        struct $marker;

        impl EventKind for $marker {
            type Args<'a> = ($($ty,)*);
            #[inline(always)]
            fn call<'a>(
                $handler: &HookHandler,
                ($($arg,)*): Self::Args<'a>,
                $ctx: &'a HookExecutionContext,
            ) -> HookFuture<'a, HookResult<()>> {
                $call
            }
        }

        $(#[$doc])*
        pub(crate) fn $name<'a>(
            dispatch: &Dispatch<'a>,
            $($arg: $ty),*
        ) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
            run_events::<$marker>(*dispatch, ($($arg,)*))
        }
    };
}

event_point!(
    /// `after_thread_created`.
    after_thread_created, AfterThreadCreated, |h, (state: &'a ThreadState), ctx| adapter!(*h, AfterThreadCreated)(state, ctx)
);
event_point!(
    /// `after_subagent_created`, on the parent with the child's state.
    after_subagent_created, AfterSubagentCreated, |h, (state: &'a ThreadState, child: &'a ThreadState), ctx| adapter!(
        *h,
        AfterSubagentCreated
    )(state, child, ctx)
);
event_point!(
    /// M3: `after_create_message`.
    after_create_message, AfterCreateMessage, |h, (state: &'a ThreadState, record: &'a MessageRecord), ctx| adapter!(
        *h,
        AfterCreateMessage
    )(state, record, ctx)
);
event_point!(
    /// M5: `after_update_message`.
    after_update_message, AfterUpdateMessage, |h, (state: &'a ThreadState, message: &'a HookMessage), ctx| adapter!(
        *h,
        AfterUpdateMessage
    )(state, message, ctx)
);
event_point!(
    /// T1-T3: `tool_call_started`, with the streamed `progress` text when there is one.
    tool_call_started, ToolCallStarted, |h, (state: &'a ThreadState, call: &'a HookToolCall, progress: Option<&'a str>), ctx| adapter!(
        *h,
        ToolCallStarted
    )(state, call, progress, ctx)
);
event_point!(
    /// T4: `tool_call_done`.
    tool_call_done, ToolCallDone, |h, (state: &'a ThreadState, call: &'a HookToolCall, result: &'a HookToolResult), ctx| adapter!(
        *h,
        ToolCallDone
    )(state, call, result, ctx)
);
event_point!(
    /// The user-scope events, run for every linked hook of their kind (U1).
    user_scope, UserScope, |h, (user: &'a UserState), _ctx| adapter!(*h, UserClientAttached | UserClientDetached | UserValueChanged)(
        user
    )
);

/// U1: a user-scope event, run for every linked hook of its kind.
pub(crate) fn user_event<'a>(
    hooks: &'a [ResolvedHook],
    default_timeout: std::time::Duration,
    user: &'a UserState,
) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
    let dispatch = Dispatch { chain: hooks, enabled: hooks_core::EnabledRelationships::NONE, default_timeout };
    user_scope(&dispatch, user)
}
