use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "LimitMessages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

fn main() {}
