//! D6: a subagent relationship naming an agent that does not exist is an error on that name.
use hooks_runtime::prelude::*;

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    tool_description: "Reads and summarizes the mailbox.",
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

define_prompt! { name: coordinator_prompt, model: "m", prompt: "Coordinate." }

define_agent! {
    name: coordinator,
    side_a: { prompt: coordinator_prompt, subagents: [{ agent: mail_agnet, max_instances: 1 }] },
    side_b: { human: true },
}

fn main() {}
