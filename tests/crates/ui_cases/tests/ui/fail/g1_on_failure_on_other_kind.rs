use hooks_runtime::prelude::*;

#[hook(tool_call_done, id = "log_done", on_failure = deny)]
fn log_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

fn main() {}
