use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "append_date")]
fn append_date(_state: &ThreadState, system: String) -> Option<String> {
    Some(system)
}

#[hook(prefilter_llm_history, id = "drop_system")]
fn drop_system(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<LlmMessage> {
    let _ = messages;
    Vec::new()
}

#[hook(before_create_message, id = "add_metadata")]
fn add_metadata(_state: &ThreadState, message: &MessageRecord) -> MessageRecord {
    message.clone()
}

#[hook(after_subagent_created, id = "note_child")]
fn note_child(_state: &ThreadState, _child: &UserState) {}

#[hook(after_update_message, id = "audit_updated")]
fn audit_updated(_state: &ThreadState, _message: &MessageRecord) {}

#[hook(before_store_tool_result, id = "redact_emails")]
fn redact(_state: &ThreadState, _call: &HookToolCall, result: HookToolResult) -> HookToolResult {
    result
}

fn main() {}
