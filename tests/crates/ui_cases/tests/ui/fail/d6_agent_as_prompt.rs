//! D6: an agent named where a prompt is expected is an error on that name.
use hooks_runtime::prelude::*;

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

define_agent! {
    name: coordinator,
    side_a: { prompt: mail_agent },
    side_b: { human: true },
}

fn main() {}
