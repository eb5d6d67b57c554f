//! D6: a hook's function name listed with other hooks (which adds the repeated-hook check's use
//! of every path) is still one error, on that name, naming the id.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

#[hook(after_create_message, id = "audit_messages")]
fn audit(_state: &ThreadState, _message: &MessageRecord) {}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [audit_messages, limit],
}

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    hooks: [limit, audit_messages],
}

fn main() {}
