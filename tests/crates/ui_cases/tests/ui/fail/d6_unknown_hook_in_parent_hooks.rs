//! D6: a `parent_hooks` requirement naming a hook that does not exist is an error on that name.
use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "mail_context")]
fn mail_context(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nMailbox: ..."))
}

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    tool_description: "Reads and summarizes the mailbox.",
    parent_hooks: [{ hook: mail_contxt, reason: "Shows newly synchronized mail to the coordinator." }],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

fn main() {}
