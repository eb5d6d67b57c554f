use hooks_runtime::prelude::*;

#[hook(filter_message, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

fn main() {}
