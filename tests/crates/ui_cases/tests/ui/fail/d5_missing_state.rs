use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

fn main() {}
