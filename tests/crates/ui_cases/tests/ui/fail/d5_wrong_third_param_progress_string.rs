use hooks_runtime::prelude::*;

#[hook(tool_call_started, id = "show_progress")]
fn show_progress(_state: &ThreadState, _call: &HookToolCall, progress: Option<String>) {
    let _ = progress;
}

fn main() {}
