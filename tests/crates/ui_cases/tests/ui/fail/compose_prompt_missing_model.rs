//! `define_prompt!` without `model` is an error that says how to add it.
use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    prompt: "Help the customer.",
}

fn main() {}
