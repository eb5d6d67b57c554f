//! A side with neither `prompt` nor `human` is an error on that side.
use hooks_runtime::prelude::*;

define_prompt! { name: support_prompt, model: "m", prompt: "Help the customer." }

define_agent! {
    name: support_agent,
    side_a: { prompt: support_prompt },
    side_b: { stop_on_response: true },
}

fn main() {}
