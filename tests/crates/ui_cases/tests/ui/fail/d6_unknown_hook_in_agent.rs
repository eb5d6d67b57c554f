//! D6: an agent's `hooks` naming a hook that does not exist is an error on that name.
use hooks_runtime::prelude::*;

#[hook(after_tool_call_success, id = "log_tool_calls")]
fn log_tool_calls(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    None
}

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    side_b: { human: true },
    hooks: [log_tool_call],
}

fn main() {}
