use hooks_runtime::prelude::*;

#[hook(before_store_tool_result, id = "redact_emails")]
fn redact(_state: &ThreadState, _call: &ToolCallRecord, result: HookToolResult) -> Option<HookToolResult> {
    Some(result)
}

fn main() {}
