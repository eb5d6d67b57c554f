//! A field without `:` is an error after the key.
use hooks_runtime::prelude::*;

define_prompt! {
    name support_prompt,
    model: "m",
    prompt: "Help the customer.",
}

fn main() {}
