//! One function per hook point. Each encodes its kind's error rule (CONFORMANCE E, M, R, T) and
//! nothing else; the pipelines in `thread` call them.

use hooks_core::{
    HookError, HookExecutionContext, HookFuture, HookHandler, HookKind, HookMessage, HookResult, HookToolCall,
    HookToolResult, LlmMessage, MessageRecord, MessageUpdate, ThreadState, ToolCallRecord, UserState,
};

use super::invoke::invoke;
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
/// its error; otherwise a failed hook's input is restored from a copy taken before the call, so
/// the chain goes on with the last good value (the value moved into a failed hook is gone).
async fn run_moving<'a, K: MovingKind>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    args: K::Args<'a>,
    mut value: K::Value,
    rule: FailureRule,
) -> Result<K::Value, HookError> {
    for entry in dispatch.active() {
        let backup = (rule != FailureRule::Prevent).then(|| value.clone());
        let outcome = invoke(entry, dispatch.timeout_of(entry), || {
            K::call(&entry.hook.handler, state, args, value, &entry.context)
        })
        .await;
        match outcome {
            Ok(next) => value = next,
            Err(failure) => match (rule, backup) {
                (FailureRule::Prevent, _) | (_, None) => return Err(failure.into_error(entry)),
                (FailureRule::BlockOrKeepLastGood, Some(_)) if matches!(&failure, super::HookFailure::Error(error) if error.is_block()) =>
                {
                    return Err(failure.into_error(entry));
                }
                (_, Some(backup)) => value = backup,
            },
        }
    }
    Ok(value)
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
        if let Ok(Some(replacement)) =
            invoke(entry, dispatch.timeout_of(entry), || adapter(state, current, &entry.context)).await
        {
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
        if let Ok(Some(replacement)) =
            invoke(entry, dispatch.timeout_of(entry), || adapter(state, call, current, &entry.context)).await
        {
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
                // E2: an event hook's failure is logged by `invoke` and changes nothing else.
                let _ = invoke(entry, dispatch.timeout_of(entry), || adapter(state, $($arg,)* &entry.context)).await;
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
        let timeout = entry.hook.timeout_ms.map_or(default_timeout, std::time::Duration::from_millis);
        let _ = invoke(entry, timeout, || adapter(user)).await;
    }
}
