//! D4: a hook listed twice in one prompt's `hooks` through two paths (`limit_to_20_messages`
//! and `self::limit_to_20_messages`) is an error, found by const evaluation.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [limit_to_20_messages, self::limit_to_20_messages],
}

fn main() {}
