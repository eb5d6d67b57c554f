//! D6: a typo in an agent's hook reference is reported in the same build as an error of a
//! `#[hook]` (here its id), not only once that one is fixed.
use hooks_runtime::prelude::*;

#[hook(after_tool_call_success, id = "Log-Tool-Calls")]
fn log_tool_calls(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    None
}

#[hook(after_tool_call_failure, id = "check_refund")]
fn check_refund(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    None
}

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    side_b: { human: true },
    hooks: [check_refunds],
}

fn main() {}
