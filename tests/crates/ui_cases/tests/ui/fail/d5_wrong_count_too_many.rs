use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(
    _state: &ThreadState,
    messages: Vec<HookMessage>,
    _limit: usize,
    _ctx: &HookExecutionContext,
) -> Vec<HookMessage> {
    messages
}

fn main() {}
