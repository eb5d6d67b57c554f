//! D6: a prompt's `hooks` naming a hook that does not exist (a typo of an existing id) is an
//! error on that name, and rustc suggests the id.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [limit_to_20_mesages],
}

fn main() {}
