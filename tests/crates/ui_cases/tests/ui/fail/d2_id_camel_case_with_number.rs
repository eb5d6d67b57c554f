use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "LimitTo20Messages")]
fn limit(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    messages.truncate(20);
}

fn main() {}
