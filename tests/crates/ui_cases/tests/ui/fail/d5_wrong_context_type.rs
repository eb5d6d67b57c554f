use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>, _ctx: HookExecutionContext) -> Vec<HookMessage> {
    messages
}

#[hook(after_thread_created, id = "greet_thread")]
fn greet(_state: &ThreadState, _ctx: &HookSource) {}

#[hook(tool_call_done, id = "log_tool_done")]
async fn log_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult, _ctx: &ThreadState) {}

fn main() {}
