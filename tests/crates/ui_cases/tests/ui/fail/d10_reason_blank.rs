//! D10: a `parent_hooks` reason of only whitespace is an error on the reason.
use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "mail_context")]
fn mail_context(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nMailbox: ..."))
}

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    parent_hooks: [{ hook: mail_context, reason: "   \t" }],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

fn main() {}
