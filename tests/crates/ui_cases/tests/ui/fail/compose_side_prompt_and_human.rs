//! A side with both `prompt` and `human: true` is an error: a side has one participant.
use hooks_runtime::prelude::*;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt, human: true },
    side_b: { human: true },
}

fn main() {}
