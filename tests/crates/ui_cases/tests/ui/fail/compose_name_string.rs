//! `name: "support_prompt"` is an error on the value: a name is a plain identifier.
use hooks_runtime::prelude::*;

define_prompt! {
    name: "support_prompt",
    model: "m",
    prompt: "Help the customer.",
}

fn main() {}
