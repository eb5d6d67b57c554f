//! `model: gpt` is an error on the value: a model is a string literal.
use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    model: gpt,
    prompt: "Help the customer.",
}

fn main() {}
