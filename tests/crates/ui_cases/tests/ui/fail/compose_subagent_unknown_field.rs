//! A misspelled relationship field (`max_instance`) is an error on that key.
use hooks_runtime::prelude::*;

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

define_prompt! { name: coordinator_prompt, model: "m", prompt: "Coordinate." }

define_agent! {
    name: coordinator,
    side_a: { prompt: coordinator_prompt, subagents: [{ agent: mail_agent, max_instance: 1 }] },
    side_b: { human: true },
}

fn main() {}
