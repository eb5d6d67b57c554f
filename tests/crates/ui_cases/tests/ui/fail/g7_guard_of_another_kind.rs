use hooks_runtime::Runtime;
use hooks_runtime::prelude::*;

#[hook(tool_call_done, id = "log_done")]
fn log_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

fn main() {
    let _ = Runtime::builder().guard::<log_done>();
}
