//! D9: two `parent_hooks` requirements naming the same hook through different paths
//! (`mail_context` and `self::mail_context`) are an error, found by const evaluation.
use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "mail_context")]
fn mail_context(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system}\nMailbox: ..."))
}

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    parent_hooks: [
        { hook: mail_context, reason: "Shows newly synchronized mail to the coordinator.", stage: before_parent },
        { hook: self::mail_context, reason: "Shows the mail again, after the parent." },
    ],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

fn main() {}
