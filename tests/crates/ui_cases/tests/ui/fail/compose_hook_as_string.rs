//! A hook written as a string (`hooks: ["redact_emails"]`, the TypeScript form) is an error on
//! the string: hooks are referenced by path.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: ["limit_to_20_messages"],
}

fn main() {}
