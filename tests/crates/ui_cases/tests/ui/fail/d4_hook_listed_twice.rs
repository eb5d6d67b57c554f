//! D4: a hook listed twice (same path) in one prompt's `hooks` is an error on the second.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [limit_to_20_messages, limit_to_20_messages],
}

fn main() {}
