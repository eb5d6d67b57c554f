//! A prompt whose fields the macro rejects is still defined under its name, so the agent whose
//! side names it adds no error of its own: one mistake, one error, at the mistake.
use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    tools: "lookup_order",
}

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    side_b: { human: true },
}

fn main() {}
