//! One function per hook point. Each encodes its kind's error rule (CONFORMANCE E, M, R, T) and
//! nothing else; the pipelines in `thread` call them.

use hooks_core::{
    HookError, HookExecutionContext, HookFuture, HookHandler, HookMessage, HookResult, HookToolCall, HookToolResult,
    LlmMessage, MessageRecord, MessageUpdate, ResolvedHook, ThreadState, ToolCallRecord, UserState,
};

use super::invoke::{self, Started, spans_wanted};
use super::{Dispatch, FailureRule};

/// A kind whose chain transforms one value in place.
trait TransformKind {
    /// The value the chain transforms.
    type Value: Clone + Send;
    /// What the hooks get besides the state and the value (`()` for most kinds).
    type Arg: ?Sized + Sync;
    fn call<'v>(
        handler: &HookHandler,
        state: &'v ThreadState,
        arg: &'v Self::Arg,
        value: &'v mut Self::Value,
        ctx: &'v HookExecutionContext,
    ) -> HookFuture<'v, HookResult<()>>;
}

macro_rules! transform_kind {
    ($marker:ident, $value:ty, $arg:ty, |$handler:ident, $state:ident, $a:ident, $v:ident, $ctx:ident| $call:expr) => {
        struct $marker;
        impl TransformKind for $marker {
            type Value = $value;
            type Arg = $arg;
            #[inline(always)]
            fn call<'v>(
                $handler: &HookHandler,
                $state: &'v ThreadState,
                $a: &'v Self::Arg,
                $v: &'v mut Self::Value,
                $ctx: &'v HookExecutionContext,
            ) -> HookFuture<'v, HookResult<()>> {
                $call
            }
        }
    };
}

/// The adapter of `entry` for a chain of `variant`; a chain holds only hooks of its kind.
macro_rules! adapter {
    ($handler:expr, $($variant:ident)|+) => {
        match $handler {
            $(HookHandler::$variant(adapter))|+ => adapter,
            other => unreachable!("{} hook in a {} chain", other.kind(), stringify!($($variant)|+)),
        }
    };
}

transform_kind!(FilterMessages, Vec<HookMessage>, (), |h, state, _a, v, ctx| adapter!(*h, FilterMessages)(
    state, v, ctx
));
transform_kind!(PrefilterLlmHistory, Vec<LlmMessage>, (), |h, state, _a, v, ctx| adapter!(*h, PrefilterLlmHistory)(
    state, v, ctx
));
transform_kind!(BeforeCreateMessage, MessageRecord, (), |h, state, _a, v, ctx| adapter!(*h, BeforeCreateMessage)(
    state, v, ctx
));
transform_kind!(BeforeUpdateMessage, MessageUpdate, str, |h, state, id, v, ctx| adapter!(*h, BeforeUpdateMessage)(
    state, id, v, ctx
));
transform_kind!(BeforeStoreToolResult, HookToolResult, ToolCallRecord, |h, state, call, v, ctx| adapter!(
    *h,
    BeforeStoreToolResult
)(state, call, v, ctx));
transform_kind!(AfterSystemMessage, String, (), |h, state, _a, v, ctx| adapter!(*h, AfterSystemMessage)(state, v, ctx));
transform_kind!(AfterToolCall, HookToolResult, HookToolCall, |h, state, call, v, ctx| adapter!(
    *h,
    AfterToolCallSuccess | AfterToolCallFailure
)(state, call, v, ctx));

/// Runs a transform chain on `value` under `rule`.
///
/// With [`FailureRule::Prevent`] the first failure returns its error, and the value is discarded
/// by the caller, so nothing is ever snapshotted. Otherwise a failing hook leaves the chain going
/// on with the last good value (E1, E7): an in-place hook's value is as the hook left it (no
/// copy); before a hook that moves the value (a by-value hook, which leaves nothing behind when it
/// fails, times out or panics) a snapshot is taken into one buffer per chain, reused from hook to
/// hook with `clone_from` so that after the first it allocates nothing, and restored on failure.
async fn run_transform<K: TransformKind>(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    arg: &K::Arg,
    value: &mut K::Value,
    rule: FailureRule,
) -> Result<(), HookError> {
    if dispatch.is_empty() {
        return Ok(());
    }
    let keep_last_good = rule != FailureRule::Prevent;
    let traced = spans_wanted();
    let mut snapshot: Option<K::Value> = None;
    let mut clock = invoke::HookClock::default();
    for (position, entry) in dispatch.chain.iter().enumerate() {
        if !entry.is_active(&dispatch.enabled) {
            continue;
        }
        let restore = keep_last_good && entry.hook.moves_value;
        if restore {
            match &mut snapshot {
                Some(saved) => saved.clone_from(value),
                None => snapshot = Some(value.clone()),
            }
        }
        let timeout = dispatch.timeout_of(entry);
        let slot = &mut *value;
        let call = move || {
            // Moving the borrow out makes the closure `FnOnce`: the hook's answer may hold it.
            let slot = slot;
            K::call(&entry.hook.handler, state, arg, slot, &entry.context)
        };
        let failure = if traced {
            match invoke::run_traced(entry, timeout, call).await {
                Ok(()) => continue,
                Err(failure) => failure,
            }
        } else {
            // A sync hook that succeeds goes on at once: its outcome is never stored into the
            // future's state and read back (that round trip was most of a hook's cost).
            match invoke::start(entry, timeout, call) {
                Started::Done(Ok(())) => continue,
                Started::Done(Err(failure)) => failure,
                Started::Pending(future) => match invoke::finish(future, timeout, None, &mut clock, position).await {
                    Ok(()) => continue,
                    Err(failure) => failure,
                },
            }
        };
        invoke::log_failure(entry, &failure);
        if !keep_last_good || (rule == FailureRule::BlockOrKeepLastGood && failure.is_block()) {
            return Err(failure.into_error(entry));
        }
        if let (true, Some(saved)) = (restore, &snapshot) {
            value.clone_from(saved);
        }
    }
    Ok(())
}

/// Runs an event chain: each failure is logged and changes nothing else (E2). A macro rather
/// than a function: the adapter call borrows the point's arguments, which a closure bound over
/// every entry lifetime could not express.
macro_rules! run_events {
    ($dispatch:expr, |$entry:ident| $call:expr) => {{
        let dispatch = $dispatch;
        let traced = !dispatch.is_empty() && spans_wanted();
        let mut clock = invoke::HookClock::default();
        for (position, $entry) in dispatch.chain.iter().enumerate() {
            if !$entry.is_active(&dispatch.enabled) {
                continue;
            }
            let timeout = dispatch.timeout_of($entry);
            let failure = if traced {
                match invoke::run_traced($entry, timeout, || $call).await {
                    Ok(()) => continue,
                    Err(failure) => failure,
                }
            } else {
                match invoke::start($entry, timeout, || $call) {
                    Started::Done(Ok(())) => continue,
                    Started::Done(Err(failure)) => failure,
                    Started::Pending(future) => match invoke::finish(future, timeout, None, &mut clock, position).await
                    {
                        Ok(()) => continue,
                        Err(failure) => failure,
                    },
                }
            };
            // E2: an event hook's failure is logged and changes nothing else.
            invoke::log_failure($entry, &failure);
        }
    }};
}

/// R3-R4: `filter_messages`; failures keep the last good value (E1, E7).
pub(crate) async fn filter_messages(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    mut messages: Vec<HookMessage>,
) -> Vec<HookMessage> {
    let _ = run_transform::<FilterMessages>(dispatch, state, &(), &mut messages, FailureRule::KeepLastGood).await;
    messages
}

/// R5, R7: `prefilter_llm_history`; a `block: true` error stops the step, others keep the last
/// good value.
pub(crate) async fn prefilter_llm_history(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    mut messages: Vec<LlmMessage>,
) -> Result<Vec<LlmMessage>, HookError> {
    run_transform::<PrefilterLlmHistory>(dispatch, state, &(), &mut messages, FailureRule::BlockOrKeepLastGood).await?;
    Ok(messages)
}

/// M1, M2, M9: `before_create_message` under the write's rule.
pub(crate) async fn before_create_message(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    mut record: MessageRecord,
    rule: FailureRule,
) -> Result<MessageRecord, HookError> {
    run_transform::<BeforeCreateMessage>(dispatch, state, &(), &mut record, rule).await?;
    Ok(record)
}

/// M4: `before_update_message`; the first failure prevents the update.
pub(crate) async fn before_update_message(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    message_id: &str,
    mut update: MessageUpdate,
) -> Result<MessageUpdate, HookError> {
    run_transform::<BeforeUpdateMessage>(dispatch, state, message_id, &mut update, FailureRule::Prevent).await?;
    Ok(update)
}

/// T6: `before_store_tool_result`; the tool result is stored whatever happens, with the last
/// good value (M9).
pub(crate) async fn before_store_tool_result(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    call: &ToolCallRecord,
    mut result: HookToolResult,
) -> HookToolResult {
    let _ = run_transform::<BeforeStoreToolResult>(dispatch, state, call, &mut result, FailureRule::KeepLastGood).await;
    result
}

/// R1: `after_system_message`; a by-value hook's `None` keeps the message and a string replaces
/// it; a failure keeps the last good value.
pub(crate) async fn after_system_message(dispatch: &Dispatch<'_>, state: &ThreadState, mut system: String) -> String {
    let _ = run_transform::<AfterSystemMessage>(dispatch, state, &(), &mut system, FailureRule::KeepLastGood).await;
    system
}

/// T5: `after_tool_call_success` or `_failure` (by the result's status); a by-value hook's `None`
/// keeps the result and a returned result replaces it; a failure keeps the last good value.
pub(crate) async fn after_tool_call(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    mut result: HookToolResult,
) -> HookToolResult {
    let _ = run_transform::<AfterToolCall>(dispatch, state, call, &mut result, FailureRule::KeepLastGood).await;
    result
}

macro_rules! event_point {
    ($(#[$doc:meta])* $name:ident, $variant:ident, ($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        pub(crate) async fn $name(dispatch: &Dispatch<'_>, state: &ThreadState, $($arg: $ty),*) {
            run_events!(dispatch, |entry| adapter!(entry.hook.handler, $variant)(state, $($arg,)* &entry.context));
        }
    };
}

event_point!(
    /// `after_thread_created`.
    after_thread_created, AfterThreadCreated, ()
);
event_point!(
    /// `after_subagent_created`, on the parent with the child's state.
    after_subagent_created, AfterSubagentCreated, (child: &ThreadState)
);
event_point!(
    /// M3: `after_create_message`.
    after_create_message, AfterCreateMessage, (record: &MessageRecord)
);
event_point!(
    /// M5: `after_update_message`.
    after_update_message, AfterUpdateMessage, (message: &HookMessage)
);
event_point!(
    /// T1-T3: `tool_call_started`.
    tool_call_started, ToolCallStarted, (call: &HookToolCall, progress: Option<&str>)
);
event_point!(
    /// T4: `tool_call_done`.
    tool_call_done, ToolCallDone, (call: &HookToolCall, result: &HookToolResult)
);

/// U1: a user-scope event, run for every linked hook of its kind.
pub(crate) async fn user_event(hooks: &[ResolvedHook], default_timeout: std::time::Duration, user: &UserState) {
    let dispatch = Dispatch { chain: hooks, enabled: hooks_core::EnabledRelationships::NONE, default_timeout };
    run_events!(&dispatch, |entry| adapter!(
        entry.hook.handler,
        UserClientAttached | UserClientDetached | UserValueChanged
    )(user));
}
