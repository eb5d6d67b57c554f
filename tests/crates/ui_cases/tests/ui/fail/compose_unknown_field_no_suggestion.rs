//! An unknown field with no close match is an error on that key that lists the fields.
use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    temperature: 1,
}

fn main() {}
