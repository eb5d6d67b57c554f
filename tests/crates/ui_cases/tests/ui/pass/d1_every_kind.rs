//! D1, G1: one hook of each of the 18 kinds (15 thread kinds, 3 user-scope kinds) compiles, mixing
//! sync and async, with and without the context, plain and `Result` returns, `timeout_ms` and
//! named lifetimes; each companion's `DEF` carries the right kind, asyncness and timeout.
use hooks_runtime::definition::HookDef;
use hooks_runtime::prelude::*;

#[hook(after_thread_created, id = "greet_thread")]
fn greet_thread(_state: &ThreadState) {}

#[hook(after_subagent_created, id = "note_child", timeout_ms = 250)]
async fn note_child(_state: &ThreadState, _child: &ThreadState, _ctx: &HookExecutionContext) -> Result<(), HookError> {
    Ok(())
}

#[hook(after_system_message, id = "append_date")]
fn append_date(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nToday is Monday."))
}

#[hook(filter_messages, id = "limit_to_20_messages", timeout_ms = 1000)]
async fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let skip = messages.len().saturating_sub(20);
    messages.into_iter().skip(skip).collect()
}

#[hook(prefilter_llm_history, id = "drop_system")]
fn drop_system(
    _state: &ThreadState,
    messages: Vec<LlmMessage>,
    _ctx: &HookExecutionContext,
) -> Result<Vec<LlmMessage>, HookError> {
    Ok(messages.into_iter().filter(|m| m.role != "system").collect())
}

#[hook(before_create_message, id = "add_execution_metadata")]
async fn add_metadata(state: &ThreadState, mut message: MessageRecord) -> Result<MessageRecord, HookError> {
    message.extra.insert("metadata".into(), serde_json::json!({ "thread": state.thread_id }));
    Ok(message)
}

#[hook(before_update_message, id = "stamp_update", blocking, timeout_ms = 5)]
fn stamp_update(
    _state: &ThreadState,
    _message_id: &str,
    update: MessageUpdate,
    _ctx: &HookExecutionContext,
) -> MessageUpdate {
    update
}

#[hook(before_store_tool_result, id = "redact_emails")]
fn redact(_state: &ThreadState, _call: &ToolCallRecord, mut result: HookToolResult) -> HookToolResult {
    result.result = result.result.map(|text| text.replace('@', " at "));
    result
}

#[hook(after_create_message, id = "audit_created")]
async fn audit_created(_state: &ThreadState, _message: &MessageRecord, _ctx: &HookExecutionContext) {}

#[hook(after_update_message, id = "audit_updated")]
fn audit_updated(_state: &ThreadState, _message: &HookMessage) -> Result<(), HookError> {
    Ok(())
}

#[hook(after_tool_call_success, id = "keep_success")]
fn keep_success(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    None
}

#[hook(after_tool_call_failure, id = "explain_failure", timeout_ms = 30000)]
async fn explain_failure(
    _state: &ThreadState,
    call: &HookToolCall,
    _result: &HookToolResult,
    _ctx: &HookExecutionContext,
) -> Result<HookToolResult, HookError> {
    Ok(HookToolResult::error(format!("{} failed; try again later", call.name())))
}

#[hook(tool_call_started, id = "show_progress")]
fn show_progress<'a>(
    _state: &'a ThreadState,
    _call: &'a HookToolCall,
    _progress: Option<&'a str>,
    _ctx: &'a HookExecutionContext,
) {
}

#[hook(tool_call_done, id = "log_tool_done")]
async fn log_tool_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Result<(), HookError> {
    Ok(())
}

#[hook(user_client_attached, id = "welcome_client")]
fn welcome_client(_user: &UserState) {}

#[hook(user_client_detached, id = "farewell_client", timeout_ms = 100)]
async fn farewell_client(_user: &UserState) -> Result<(), HookError> {
    Ok(())
}

#[hook(before_tool_call, id = "no_force_push", on_failure = deny)]
fn no_force_push(_state: &ThreadState, call: &HookToolCall, arguments: &mut serde_json::Value) -> ToolDecision {
    let command = arguments["command"].as_str().unwrap_or_default();
    if call.name() == "Bash" && command.contains("push --force") {
        return ToolDecision::ask("force push: a person decides");
    }
    ToolDecision::allow()
}

#[hook(user_value_changed, id = "sync_values")]
async fn sync_values<'u>(_user: &'u UserState) {}

fn check(def: &HookDef, id: &str, kind: HookKind, is_async: bool, timeout_ms: Option<u64>) {
    assert_eq!(def.id, id);
    assert_eq!(def.kind(), kind, "kind of `{id}`");
    assert_eq!(def.is_async, is_async, "is_async of `{id}`");
    assert_eq!(def.timeout_ms, timeout_ms, "timeout_ms of `{id}`");
}

fn main() {
    use HookKind as K;
    check(<greet_thread as Hook>::DEF, "greet_thread", K::AfterThreadCreated, false, None);
    check(<note_child as Hook>::DEF, "note_child", K::AfterSubagentCreated, true, Some(250));
    check(<append_date as Hook>::DEF, "append_date", K::AfterSystemMessage, false, None);
    check(<limit_to_20_messages as Hook>::DEF, "limit_to_20_messages", K::FilterMessages, true, Some(1000));
    check(<drop_system as Hook>::DEF, "drop_system", K::PrefilterLlmHistory, false, None);
    check(<add_execution_metadata as Hook>::DEF, "add_execution_metadata", K::BeforeCreateMessage, true, None);
    check(<stamp_update as Hook>::DEF, "stamp_update", K::BeforeUpdateMessage, false, Some(5));
    check(<redact_emails as Hook>::DEF, "redact_emails", K::BeforeStoreToolResult, false, None);
    check(<audit_created as Hook>::DEF, "audit_created", K::AfterCreateMessage, true, None);
    check(<audit_updated as Hook>::DEF, "audit_updated", K::AfterUpdateMessage, false, None);
    check(<keep_success as Hook>::DEF, "keep_success", K::AfterToolCallSuccess, false, None);
    check(<explain_failure as Hook>::DEF, "explain_failure", K::AfterToolCallFailure, true, Some(30000));
    check(<show_progress as Hook>::DEF, "show_progress", K::ToolCallStarted, false, None);
    check(<log_tool_done as Hook>::DEF, "log_tool_done", K::ToolCallDone, true, None);
    check(<no_force_push as Hook>::DEF, "no_force_push", K::BeforeToolCall, false, None);
    assert_eq!(<no_force_push as Hook>::DEF.on_failure, Some(hooks_runtime::definition::OnFailure::Deny));
    assert_eq!(<log_tool_done as Hook>::DEF.on_failure, None);
    check(<welcome_client as Hook>::DEF, "welcome_client", K::UserClientAttached, false, None);
    check(<farewell_client as Hook>::DEF, "farewell_client", K::UserClientDetached, true, Some(100));
    check(<sync_values as Hook>::DEF, "sync_values", K::UserValueChanged, true, None);

    // Every kind is covered exactly once.
    let defs = [
        <greet_thread as Hook>::DEF,
        <note_child as Hook>::DEF,
        <append_date as Hook>::DEF,
        <limit_to_20_messages as Hook>::DEF,
        <drop_system as Hook>::DEF,
        <add_execution_metadata as Hook>::DEF,
        <stamp_update as Hook>::DEF,
        <redact_emails as Hook>::DEF,
        <audit_created as Hook>::DEF,
        <audit_updated as Hook>::DEF,
        <keep_success as Hook>::DEF,
        <explain_failure as Hook>::DEF,
        <show_progress as Hook>::DEF,
        <log_tool_done as Hook>::DEF,
        <no_force_push as Hook>::DEF,
        <welcome_client as Hook>::DEF,
        <farewell_client as Hook>::DEF,
        <sync_values as Hook>::DEF,
    ];
    let mut kinds: Vec<HookKind> = defs.iter().map(|def| def.kind()).collect();
    kinds.sort();
    assert_eq!(kinds, HookKind::ALL.to_vec());
}
