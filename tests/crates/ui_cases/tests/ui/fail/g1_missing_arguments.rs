use hooks_runtime::prelude::*;

#[hook(before_tool_call, id = "no_force_push", on_failure = deny)]
fn no_force_push(_state: &ThreadState, _call: &HookToolCall) -> ToolDecision {
    ToolDecision::allow()
}

fn main() {}
