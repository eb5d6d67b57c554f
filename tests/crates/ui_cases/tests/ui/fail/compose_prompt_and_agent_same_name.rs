//! A prompt and an agent with the same name in one module are an error: put them in `prompts`
//! and `agents` modules (DESIGN section 2).
use hooks_runtime::prelude::*;

define_prompt! { name: duplicate_finder, model: "m", prompt: "Find duplicates." }

define_agent! {
    name: duplicate_finder,
    side_a: { prompt: duplicate_finder },
    side_b: { human: true },
}

fn main() {}
