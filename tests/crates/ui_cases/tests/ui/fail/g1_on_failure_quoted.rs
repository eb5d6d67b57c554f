use hooks_runtime::prelude::*;

#[hook(before_tool_call, id = "no_force_push", on_failure = "deny")]
fn no_force_push(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut serde_json::Value) -> ToolDecision {
    ToolDecision::allow()
}

fn main() {}
