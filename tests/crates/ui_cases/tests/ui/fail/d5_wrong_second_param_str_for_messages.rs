use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: &str) -> Vec<HookMessage> {
    let _ = messages;
    Vec::new()
}

fn main() {}
