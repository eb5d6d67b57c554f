//! The two `before_tool_call` guards of the operations agent, shared by the approvals and
//! tracing examples: one denies destructive shell commands, the other asks a person before a
//! payment over 100.

use hooks_runtime::prelude::*;
use serde_json::Value;

/// Runtime-wide: no thread of any agent runs a destructive command. A guard that cannot
/// decide fails closed.
#[hook(before_tool_call, id = "no_destructive_commands", on_failure = deny)]
pub(crate) fn no_destructive_commands(
    _state: &ThreadState,
    call: &HookToolCall,
    arguments: &mut Value,
) -> ToolDecision {
    let command = arguments["command"].as_str().unwrap_or_default();
    if call.name() == "shell" && (command.contains("rm -rf") || command.contains("mkfs")) {
        return ToolDecision::deny("destructive commands are not allowed");
    }
    ToolDecision::allow()
}

/// Payments over 100 wait for a person.
#[hook(before_tool_call, id = "large_payments_need_a_person", on_failure = deny)]
pub(crate) fn large_payments_need_a_person(
    _state: &ThreadState,
    call: &HookToolCall,
    arguments: &mut Value,
) -> ToolDecision {
    match arguments["amount"].as_f64() {
        Some(amount) if call.name() == "pay" && amount > 100.0 => {
            ToolDecision::ask(format!("a payment of {amount} is over the limit of 100"))
        }
        _ => ToolDecision::allow(),
    }
}
