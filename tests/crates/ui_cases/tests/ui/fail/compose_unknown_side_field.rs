//! A misspelled field inside a side (`max_step`) is an error on that key, suggesting `max_steps`.
use hooks_runtime::prelude::*;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt, max_step: 6 },
    side_b: { human: true },
}

fn main() {}
