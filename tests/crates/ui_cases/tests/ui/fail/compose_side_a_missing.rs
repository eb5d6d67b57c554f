//! `define_agent!` without `side_a` is an error that says how to add it.
use hooks_runtime::prelude::*;

define_agent! {
    name: support_agent,
    side_b: { human: true },
}

fn main() {}
