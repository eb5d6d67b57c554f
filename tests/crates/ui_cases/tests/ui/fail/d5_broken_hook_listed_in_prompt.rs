//! D5: a hook whose signature the macro rejects is still defined under its id, so the prompt
//! that lists it adds no error of its own: one mistake, one error, at the mistake.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [limit_to_20_messages],
}

fn main() {}
