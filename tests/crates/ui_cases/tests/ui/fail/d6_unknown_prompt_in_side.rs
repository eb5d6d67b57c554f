//! D6: a side naming a prompt that does not exist is an error on that name.
use hooks_runtime::prelude::*;

define_prompt! { name: coordinator_prompt, model: "m", prompt: "Coordinate." }

define_agent! {
    name: coordinator,
    side_a: { prompt: coordinater_prompt },
    side_b: { human: true },
}

fn main() {}
