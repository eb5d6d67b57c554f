use hooks_runtime::prelude::*;

#[hook(after_create_message, id = "audit_created")]
fn audit_created(state: String, _message: &MessageRecord) {
    let _ = state;
}

#[hook(before_create_message, id = "add_metadata")]
fn add_metadata(_state: ThreadState, message: MessageRecord) -> MessageRecord {
    message
}

#[hook(tool_call_done, id = "log_tool_done")]
async fn log_done(_state: &mut ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

#[hook(after_system_message, id = "append_date")]
fn append_date(_state: &HookExecutionContext, _system: &str) -> Option<String> {
    None
}

// A user-scope kind given a thread's state.
#[hook(user_value_changed, id = "sync_values")]
fn sync_values(_user: &ThreadState) {}

fn main() {}
