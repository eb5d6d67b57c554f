//! One function per hook point. Each encodes its kind's error rule (CONFORMANCE E, M, R, T) and
//! nothing else; the pipelines in `thread` call them.

use hooks_core::{
    HookError, HookExecutionContext, HookFuture, HookHandler, HookKind, HookMessage, HookResult, HookToolCall,
    HookToolResult, LlmMessage, MessageRecord, MessageUpdate, ThreadState, ToolCallRecord, UserState,
};

use super::invoke::run_hook;
use super::{Dispatch, FailureRule};

/// A kind whose chain moves a value through each hook and returns it.
trait MovingKind {
    type Value: Clone + Send;
    type Args<'a>: Copy + Send;
    fn call<'a>(
        handler: &HookHandler,
        state: &'a ThreadState,
        args: Self::Args<'a>,
        value: Self::Value,
        ctx: &'a HookExecutionContext,
    ) -> HookFuture<'a, HookResult<Self::Value>>;
}

macro_rules! moving_kind {
    ($marker:ident, $variant:ident, $value:ty, ($($arg:ident: $arg_ty:ty),*)) => {
        struct $marker;
        impl MovingKind for $marker {
            type Value = $value;
            type Args<'a> = ($($arg_ty,)*);
            #[inline]
            fn call<'a>(
                handler: &HookHandler,
                state: &'a ThreadState,
                ($($arg,)*): Self::Args<'a>,
                value: Self::Value,
                ctx: &'a HookExecutionContext,
            ) -> HookFuture<'a, HookResult<Self::Value>> {
                match handler {
                    HookHandler::$variant(adapter) => adapter(state, $($arg,)* value, ctx),
                    other => unreachable!("{} hook in the {} chain", other.kind(), HookKind::$variant),
                }
            }
        }
    };
}

moving_kind!(FilterMessages, FilterMessages, Vec<HookMessage>, ());
moving_kind!(PrefilterLlmHistory, PrefilterLlmHistory, Vec<LlmMessage>, ());
moving_kind!(BeforeCreateMessage, BeforeCreateMessage, MessageRecord, ());
moving_kind!(BeforeUpdateMessage, BeforeUpdateMessage, MessageUpdate, (message_id: &'a str));
moving_kind!(BeforeStoreToolResult, BeforeStoreToolResult, HookToolResult, (call: &'a ToolCallRecord));

/// Runs a moving chain under `rule`. With [`FailureRule::Prevent`] the first failure returns
/// its error and no copy is ever taken. Otherwise the chain goes on with the last good value: a
/// hook that can fail by design (it returns a `Result`, or it is async and can time out) gets a
/// copy of its input kept, since the value moved into a failed hook is gone. A sync hook that
/// returns a plain value can fail only by panicking, a bug; for it no copy is taken per call, and
/// a panic restores the newest copy the chain holds: the value before the last hook that could
/// fail, or the value the chain started with.
async fn run_moving<'a, K: MovingKind>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    args: K::Args<'a>,
    mut value: K::Value,
    rule: FailureRule,
) -> Result<K::Value, HookError> {
    if dispatch.chain.is_empty() {
        return Ok(value);
    }
    let keep_last_good = rule != FailureRule::Prevent;
    let mut backup = (keep_last_good && dispatch.active().any(|entry| !can_fail(entry))).then(|| value.clone());
    for entry in dispatch.active() {
        if keep_last_good && can_fail(entry) {
            backup = Some(value.clone());
        }
        let outcome = run_hook!(dispatch, entry, || K::call(&entry.hook.handler, state, args, value, &entry.context));
        match outcome {
            Ok(next) => value = next,
            Err(failure) if !keep_last_good || (rule == FailureRule::BlockOrKeepLastGood && failure.is_block()) => {
                return Err(failure.into_error(entry));
            }
            Err(_) => value = backup.clone().expect("a copy is kept whenever a hook runs under KeepLastGood"),
        }
    }
    Ok(value)
}

/// Whether a hook can fail other than by panicking: it returns a `Result`, or it is async and
/// can time out.
#[inline]
fn can_fail(entry: &hooks_core::ResolvedHook) -> bool {
    entry.hook.fallible || entry.hook.is_async
}

/// R3-R4: `filter_messages`; failures keep the last good value (E1).
pub(crate) async fn filter_messages(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    messages: Vec<HookMessage>,
) -> Vec<HookMessage> {
    run_moving::<FilterMessages>(dispatch, state, (), messages, FailureRule::KeepLastGood)
        .await
        .expect("KeepLastGood never fails")
}

/// R5, R7: `prefilter_llm_history`; a `block: true` error stops the step, others keep the last
/// good value.
pub(crate) async fn prefilter_llm_history(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    messages: Vec<LlmMessage>,
) -> Result<Vec<LlmMessage>, HookError> {
    run_moving::<PrefilterLlmHistory>(dispatch, state, (), messages, FailureRule::BlockOrKeepLastGood).await
}

/// M1, M2, M9: `before_create_message` under the write's rule.
pub(crate) async fn before_create_message(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    record: MessageRecord,
    rule: FailureRule,
) -> Result<MessageRecord, HookError> {
    run_moving::<BeforeCreateMessage>(dispatch, state, (), record, rule).await
}

/// M4: `before_update_message`; the first failure prevents the update.
pub(crate) async fn before_update_message(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    message_id: &str,
    update: MessageUpdate,
) -> Result<MessageUpdate, HookError> {
    run_moving::<BeforeUpdateMessage>(dispatch, state, (message_id,), update, FailureRule::Prevent).await
}

/// T6: `before_store_tool_result`; the tool result is stored whatever happens, with the last
/// good value (M9).
pub(crate) async fn before_store_tool_result(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    call: &ToolCallRecord,
    result: HookToolResult,
) -> HookToolResult {
    run_moving::<BeforeStoreToolResult>(dispatch, state, (call,), result, FailureRule::KeepLastGood)
        .await
        .expect("KeepLastGood never fails")
}

/// R1: `after_system_message`; `None` keeps the message, a string replaces it, a failure keeps
/// the last good value.
pub(crate) async fn after_system_message(dispatch: &Dispatch<'_>, state: &ThreadState, mut system: String) -> String {
    for entry in dispatch.active() {
        let HookHandler::AfterSystemMessage(adapter) = entry.hook.handler else { unreachable!() };
        let current = system.as_str();
        if let Ok(Some(replacement)) = run_hook!(dispatch, entry, || adapter(state, current, &entry.context)) {
            system = replacement;
        }
    }
    system
}

/// T5: `after_tool_call_success` or `_failure` (by the result's status); `None` keeps the
/// result, a returned result replaces it, a failure keeps the last good value.
pub(crate) async fn after_tool_call(
    dispatch: &Dispatch<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    mut result: HookToolResult,
) -> HookToolResult {
    for entry in dispatch.active() {
        let adapter = match entry.hook.handler {
            HookHandler::AfterToolCallSuccess(adapter) | HookHandler::AfterToolCallFailure(adapter) => adapter,
            _ => unreachable!(),
        };
        let current = &result;
        if let Ok(Some(replacement)) = run_hook!(dispatch, entry, || adapter(state, call, current, &entry.context)) {
            result = replacement;
        }
    }
    result
}

macro_rules! event_point {
    ($(#[$doc:meta])* $name:ident, $variant:ident, ($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        pub(crate) async fn $name(dispatch: &Dispatch<'_>, state: &ThreadState, $($arg: $ty),*) {
            for entry in dispatch.active() {
                let HookHandler::$variant(adapter) = entry.hook.handler else { unreachable!() };
                // E2: an event hook's failure is logged and changes nothing else.
                let _ = run_hook!(dispatch, entry, || adapter(state, $($arg,)* &entry.context));
            }
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
pub(crate) async fn user_event(
    hooks: &[hooks_core::ResolvedHook],
    default_timeout: std::time::Duration,
    user: &UserState,
) {
    for entry in hooks {
        let adapter = match entry.hook.handler {
            HookHandler::UserClientAttached(adapter)
            | HookHandler::UserClientDetached(adapter)
            | HookHandler::UserValueChanged(adapter) => adapter,
            _ => unreachable!(),
        };
        let dispatch = Dispatch { chain: hooks, enabled: hooks_core::EnabledRelationships::NONE, default_timeout };
        let _ = run_hook!(dispatch, entry, || adapter(user));
    }
}
