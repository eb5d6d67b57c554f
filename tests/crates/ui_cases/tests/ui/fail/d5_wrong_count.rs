use hooks_runtime::prelude::*;

#[hook(tool_call_started, id = "log_tool_start")]
fn log_start(_state: &ThreadState) {}

fn main() {}
