//! G1: a `before_tool_call` hook is sync or `async`, with or without the context, returning
//! `ToolDecision` or `Result<ToolDecision, HookError>`, with either failure policy; it composes
//! in `hooks` lists and `parent_hooks`, and is a runtime-wide guard.
use hooks_runtime::prelude::*;
use hooks_runtime::Runtime;
use hooks_runtime::definition::OnFailure;
use serde_json::Value;

#[hook(before_tool_call, id = "plain_guard", on_failure = deny)]
fn plain_guard(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "async_guard", on_failure = allow, timeout_ms = 200)]
async fn async_guard(
    _state: &ThreadState,
    _call: &HookToolCall,
    arguments: &mut serde_json::Value,
    _ctx: &HookExecutionContext,
) -> Result<ToolDecision, HookError> {
    arguments["checked"] = Value::Bool(true);
    Ok(ToolDecision::ask("a person decides"))
}

#[hook(before_tool_call, id = "blocking_guard", on_failure = deny, blocking)]
fn blocking_guard<'a>(
    _state: &'a ThreadState,
    _call: &'a HookToolCall,
    _arguments: &'a mut Value,
) -> Result<ToolDecision, HookError> {
    Err(HookError::new("the policy file is unreadable"))
}

define_prompt! { name: guarded_prompt, model: "m", prompt: "Guarded.", hooks: [plain_guard, async_guard] }
define_agent! {
    name: guarded_child,
    expose_as_tool: true,
    side_a: { prompt: guarded_prompt },
    parent_hooks: [{ hook: blocking_guard, reason: "the child's tool calls are governed by its parent too" }],
}

fn main() {
    assert_eq!(<plain_guard as Hook>::DEF.on_failure, Some(OnFailure::Deny));
    assert_eq!(<async_guard as Hook>::DEF.on_failure, Some(OnFailure::Allow));
    assert!(<async_guard as Hook>::DEF.is_async);
    assert!(<blocking_guard as Hook>::DEF.blocking);
    let _ = Runtime::builder().guard::<plain_guard>().guard::<async_guard>();
}
