//! `max_steps: "6"` is an error on the value: it takes a number.
use hooks_runtime::prelude::*;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt, max_steps: "6" },
    side_b: { human: true },
}

fn main() {}
