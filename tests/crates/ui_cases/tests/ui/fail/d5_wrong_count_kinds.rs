use hooks_runtime::prelude::*;

// One missing parameter each, for five more kinds (and none at all for a sixth).
#[hook(after_subagent_created, id = "note_child")]
fn note_child(_state: &ThreadState) {}

#[hook(before_update_message, id = "stamp_update")]
fn stamp_update(_state: &ThreadState, update: MessageUpdate) -> MessageUpdate {
    update
}

#[hook(before_store_tool_result, id = "redact_emails")]
fn redact(_state: &ThreadState, result: HookToolResult) -> HookToolResult {
    result
}

#[hook(after_tool_call_failure, id = "explain_failure")]
fn explain(_state: &ThreadState, _call: &HookToolCall) -> Option<HookToolResult> {
    None
}

#[hook(user_value_changed, id = "sync_values")]
fn sync_values() {}

#[hook(after_thread_created, id = "greet_thread")]
async fn greet() {}

fn main() {}
