//! D12: every transform kind accepts the in-place form (`&mut T`, returning `()` or
//! `Result<(), HookError>`, sync or `async`, the context optional last) beside the by-value form,
//! and the definition says which form moves the chain's value.
use hooks_runtime::definition::HookDef;
use hooks_runtime::__private::{self, Adapter, HookHandler};
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_in_place")]
fn limit_in_place(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    let skip = messages.len().saturating_sub(20);
    messages.drain(..skip);
}

#[hook(prefilter_llm_history, id = "drop_system_in_place")]
async fn drop_system_in_place(
    _state: &ThreadState,
    messages: &mut Vec<LlmMessage>,
    _ctx: &HookExecutionContext,
) -> Result<(), HookError> {
    messages.retain(|m| m.role != "system");
    Ok(())
}

#[hook(before_create_message, id = "tag_in_place")]
fn tag_in_place(_state: &ThreadState, message: &mut MessageRecord) -> Result<(), HookError> {
    message.extra.insert("metadata".into(), serde_json::json!({ "tagged": true }));
    Ok(())
}

#[hook(before_update_message, id = "stamp_in_place", timeout_ms = 50)]
async fn stamp_in_place<'a>(_state: &ThreadState, _message_id: &'a str, update: &'a mut MessageUpdate) {
    update.extra.insert("status".into(), "edited".into());
}

#[hook(before_store_tool_result, id = "redact_in_place", blocking)]
fn redact_in_place(
    _state: &ThreadState,
    _call: &ToolCallRecord,
    result: &mut HookToolResult,
    _ctx: &HookExecutionContext,
) {
    if let Some(text) = &mut result.result {
        *text = text.replace('@', " at ");
    }
}

#[hook(after_system_message, id = "date_in_place")]
fn date_in_place(_state: &ThreadState, system: &mut String) {
    system.push_str("\nToday is Monday.");
}

#[hook(after_tool_call_success, id = "trim_in_place")]
async fn trim_in_place(_state: &ThreadState, _call: &HookToolCall, result: &mut HookToolResult) {
    result.result = result.result.take().map(|text| text.trim().to_owned());
}

#[hook(after_tool_call_failure, id = "soften_in_place")]
fn soften_in_place(_state: &ThreadState, _call: &HookToolCall, result: &mut HookToolResult) -> Result<(), HookError> {
    result.error = Some("the tool is unavailable; try again later".into());
    Ok(())
}

// The by-value forms, for comparison.

#[hook(filter_messages, id = "limit_by_value")]
fn limit_by_value(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

#[hook(after_system_message, id = "date_by_value")]
fn date_by_value(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nToday is Monday."))
}

fn check(def: &HookDef, kind: HookKind, is_async: bool, moves_value: bool) {
    assert_eq!(def.kind(), kind, "{}", def.id);
    assert_eq!(def.is_async, is_async, "is_async of {}", def.id);
    assert_eq!(def.moves_value, moves_value, "moves_value of {}", def.id);
}

fn main() {
    check(<limit_in_place as Hook>::DEF, HookKind::FilterMessages, false, false);
    check(<drop_system_in_place as Hook>::DEF, HookKind::PrefilterLlmHistory, true, false);
    check(<tag_in_place as Hook>::DEF, HookKind::BeforeCreateMessage, false, false);
    check(<stamp_in_place as Hook>::DEF, HookKind::BeforeUpdateMessage, true, false);
    check(<redact_in_place as Hook>::DEF, HookKind::BeforeStoreToolResult, false, false);
    check(<date_in_place as Hook>::DEF, HookKind::AfterSystemMessage, false, false);
    check(<trim_in_place as Hook>::DEF, HookKind::AfterToolCallSuccess, true, false);
    check(<soften_in_place as Hook>::DEF, HookKind::AfterToolCallFailure, false, false);
    check(<limit_by_value as Hook>::DEF, HookKind::FilterMessages, false, true);
    assert!(<redact_in_place as Hook>::DEF.blocking && !<limit_in_place as Hook>::DEF.blocking);
    // A by-value `after_system_message` hook borrows the message: nothing is moved.
    check(<date_by_value as Hook>::DEF, HookKind::AfterSystemMessage, false, false);

    // Through the adapter, as the runtime calls it: the value changes in place.
    let state = ThreadState::detached("thread_1", "agent");
    let ctx = HookExecutionContext::prompt("p");
    let HookHandler::AfterSystemMessage(Adapter::Sync(date)) = __private::handler(<date_in_place as Hook>::DEF) else { panic!() };
    let mut system = String::from("You help.");
    assert_eq!(date(&state, &mut system, &ctx), Ok(()));
    assert_eq!(system, "You help.\nToday is Monday.");
    let HookHandler::AfterSystemMessage(Adapter::Sync(date)) = __private::handler(<date_by_value as Hook>::DEF) else { panic!() };
    assert_eq!(date(&state, &mut system, &ctx), Ok(()));
    assert_eq!(system, "You help.\nToday is Monday.\nToday is Monday.");
}
