use hooks_runtime::prelude::*;

#[hook(after_tool_call_success, id = "keep_success")]
fn keep(_state: &ThreadState, call: HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    let _ = call;
    None
}

fn main() {}
