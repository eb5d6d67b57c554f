use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> bool {
    messages.is_empty()
}

#[hook(after_create_message, id = "audit_created")]
fn audit_created(_state: &ThreadState, _message: &MessageRecord) -> bool {
    true
}

#[hook(before_create_message, id = "add_metadata")]
fn add_metadata(_state: &ThreadState, message: MessageRecord) -> HookMessage {
    message.into_message()
}

#[hook(after_tool_call_success, id = "keep_success")]
fn keep(
    _state: &ThreadState,
    _call: &HookToolCall,
    _result: &HookToolResult,
) -> Result<Option<HookToolResult>, String> {
    Ok(None)
}

#[hook(after_system_message, id = "append_date")]
fn append_date(_state: &ThreadState, _system: &str) -> Option<&'static str> {
    None
}

#[hook(prefilter_llm_history, id = "drop_system")]
fn drop_system(_state: &ThreadState, _messages: Vec<LlmMessage>) {}

// A user-scope kind is an event: it returns `()`.
#[hook(user_client_attached, id = "welcome_client")]
fn welcome(_user: &UserState) -> bool {
    true
}

fn main() {}
