//! `define_agent!` without `name` is an error that says how to add it.
use hooks_runtime::prelude::*;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    side_a: { prompt: support_prompt },
    side_b: { human: true },
}

fn main() {}
