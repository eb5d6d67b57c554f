//! A side with `human: false` and no prompt is an error: it names no participant.
use hooks_runtime::prelude::*;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    side_b: { human: false },
}

fn main() {}
