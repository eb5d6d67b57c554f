//! D6: a hook named where an agent is expected is an error on that name.
use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "mail_context")]
fn mail_context(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nMailbox: ..."))
}

define_prompt! { name: coordinator_prompt, model: "m", prompt: "Coordinate." }

define_agent! {
    name: coordinator,
    side_a: { prompt: coordinator_prompt, subagents: [{ agent: mail_context }] },
    side_b: { human: true },
}

fn main() {}
