//! `define_prompt!` without `name` is an error that says how to add it.
use hooks_runtime::prelude::*;

define_prompt! {
    model: "m",
    prompt: "Help the customer.",
}

fn main() {}
