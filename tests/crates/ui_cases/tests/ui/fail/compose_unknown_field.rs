//! A misspelled field (`promt`) is an error on that key, suggesting `prompt`.
use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    model: "m",
    promt: "Help the customer.",
}

fn main() {}
