//! D4: a hook listed twice in one agent's `hooks`, once through a `use` alias, is an error
//! found by const evaluation.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages
}

use self::limit_to_20_messages as last_twenty;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    side_b: { human: true },
    hooks: [limit_to_20_messages, last_twenty],
}

fn main() {}
