use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: &mut Vec<HookMessage>) -> Vec<HookMessage> {
    std::mem::take(messages)
}

fn main() {}
