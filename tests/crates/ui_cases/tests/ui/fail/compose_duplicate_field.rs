//! A field set twice is an error on the second key.
use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    model: "other",
}

fn main() {}
