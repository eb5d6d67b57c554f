//! The event hook points: each hook observes, and a failure is logged and changes nothing else
//! (E2).
//!
//! As for transforms (`transforms.rs`), the sync hooks up to the first async one run when a point is
//! called, in a plain function: a chain of sync hooks builds no state machine. From an async hook
//! on (or when hook spans are wanted) the rest of the chain is a future the caller awaits in place.

use std::future::Future;

use hooks_core::__private::{Adapter, HookHandler, ResolvedHook, sync_adapter};
use hooks_core::{
    HookExecutionContext, HookMessage, HookResult, HookToolCall, HookToolResult, MessageRecord, ThreadState, UserState,
};

use super::chain::{Dispatch, PointRun};
use super::invoke::{self, Answer, HookFailure, Started, spans_wanted};
use super::panics;

/// An event hook point: what its hooks are given, and how its adapter is called.
trait EventKind: 'static {
    /// The point's arguments, borrowed for the chain.
    type Args<'a>: Copy + Send + Sync;
    /// The point's sync adapter.
    type Sync: Copy;
    /// A sync adapter's call: its outcome, in a register.
    fn call_plain<'a>(call: Self::Sync, args: Self::Args<'a>, ctx: &'a HookExecutionContext) -> HookResult<()>;
    /// The sync adapter of a hook known to be sync.
    fn sync_of(handler: &HookHandler) -> Self::Sync;
    /// Any hook's call.
    fn call<'a>(handler: &HookHandler, args: Self::Args<'a>, ctx: &'a HookExecutionContext) -> Answer<'a>;
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
        let outcome = if entry.is_plain() {
            match panics::catch_entered(&in_hook, || E::call_plain(E::sync_of(entry.handler()), args, &entry.context)) {
                Ok(Ok(())) => continue,
                Ok(Err(error)) => Err(HookFailure::Error(error)),
                Err(location) => Err(HookFailure::Panic(location)),
            }
        } else {
            if !entry.is_active(&dispatch.enabled) {
                continue;
            }
            if entry.handler().is_async() {
                return Some(from + offset);
            }
            let call = || E::call(entry.handler(), args, &entry.context);
            match invoke::start(entry, dispatch.timeout_of(entry), call) {
                Started::Done(outcome) => outcome,
                Started::Pending(_) => unreachable!("a sync adapter answered a future"),
            }
        };
        if let Err(failure) = outcome {
            // E2: an event hook's failure is logged and changes nothing else.
            invoke::log_failure(entry, &failure);
        }
    }
    None
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
        let outcome = match invoke::start(entry, timeout, || E::call(entry.handler(), args, &entry.context)) {
            Started::Done(outcome) => outcome,
            Started::Pending(future) => invoke::InFlight::new(future, timeout, None, &mut clock, position).await,
        };
        if let Err(failure) = outcome {
            invoke::log_failure(entry, &failure);
        }
        position += 1;
        match dispatch.chain.get(position) {
            None => return,
            Some(next) if next.handler().is_async() && next.optional_slot.is_none() => continue,
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
        let call = || E::call(entry.handler(), args, &entry.context);
        if let Err(failure) = invoke::run_traced(entry, dispatch.timeout_of(entry), call).await {
            invoke::log_failure(entry, &failure);
        }
    }
}

macro_rules! event_point {
    ($(#[$doc:meta])* $name:ident, $marker:ident [$first:ident $(| $variant:ident)*], |($($arg:ident: $ty:ty),*), $ctx:ident| ($($call:expr),*)) => {
        struct $marker;

        impl EventKind for $marker {
            type Args<'a> = ($($ty,)*);
            adapter_calls!('a, [$first $(| $variant)*], (($($arg,)*): Self::Args<'a>, $ctx: &'a HookExecutionContext) => ($($call),*));
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
    after_thread_created, AfterThreadCreated [AfterThreadCreated], |(state: &'a ThreadState), ctx| (state, ctx)
);
event_point!(
    /// `after_subagent_created`, on the parent with the child's state.
    after_subagent_created, AfterSubagentCreated [AfterSubagentCreated],
    |(state: &'a ThreadState, child: &'a ThreadState), ctx| (state, child, ctx)
);
event_point!(
    /// M3: `after_create_message`.
    after_create_message, AfterCreateMessage [AfterCreateMessage],
    |(state: &'a ThreadState, record: &'a MessageRecord), ctx| (state, record, ctx)
);
event_point!(
    /// M5: `after_update_message`.
    after_update_message, AfterUpdateMessage [AfterUpdateMessage],
    |(state: &'a ThreadState, message: &'a HookMessage), ctx| (state, message, ctx)
);
event_point!(
    /// T1-T3: `tool_call_started`, with the streamed `progress` text when there is one.
    tool_call_started, ToolCallStarted [ToolCallStarted],
    |(state: &'a ThreadState, call: &'a HookToolCall, progress: Option<&'a str>), ctx| (state, call, progress, ctx)
);
event_point!(
    /// T4: `tool_call_done`.
    tool_call_done, ToolCallDone [ToolCallDone],
    |(state: &'a ThreadState, call: &'a HookToolCall, result: &'a HookToolResult), ctx| (state, call, result, ctx)
);
event_point!(
    /// The user-scope events, run for every linked hook of their kind (U1).
    user_scope, UserScope [UserClientAttached | UserClientDetached | UserValueChanged],
    |(user: &'a UserState), _ctx| (user)
);

/// U1: a user-scope event, run for every linked hook of its kind.
pub(crate) fn user_event<'a>(
    hooks: &'a [ResolvedHook],
    default_timeout: std::time::Duration,
    user: &'a UserState,
) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
    let dispatch = Dispatch {
        chain: hooks,
        plain: None,
        enabled: hooks_core::__private::EnabledRelationships::NONE,
        default_timeout,
    };
    user_scope(&dispatch, user)
}
