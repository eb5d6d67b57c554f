use hooks_runtime::prelude::*;

#[hook(before_store_tool_result, id = "redact_emails")]
fn redact(_state: &ThreadState, _call: &ToolCallRecord, result: &HookToolResult) -> HookToolResult {
    result.clone()
}

#[hook(after_tool_call_failure, id = "explain_failure")]
fn explain(_state: &ThreadState, _call: &HookToolCall, result: HookToolResult) -> Option<HookToolResult> {
    Some(result)
}

#[hook(before_update_message, id = "stamp_update")]
fn stamp_update(_state: &ThreadState, _message_id: &str, update: MessageRecord) -> MessageRecord {
    update
}

fn main() {}
