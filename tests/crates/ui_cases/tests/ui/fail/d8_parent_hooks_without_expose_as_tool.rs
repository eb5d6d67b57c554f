//! D8: `parent_hooks` on an agent that does not set `expose_as_tool` is an error at `parent_hooks`.
use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "mail_context")]
fn mail_context(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nMailbox: ..."))
}

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    parent_hooks: [{ hook: mail_context, reason: "Shows newly synchronized mail to the coordinator." }],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

fn main() {}
