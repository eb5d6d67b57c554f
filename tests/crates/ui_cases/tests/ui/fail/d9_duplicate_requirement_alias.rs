//! D9: two `parent_hooks` requirements naming the same hook, once by its path into another
//! module and once through a `use` alias, are an error, found by const evaluation.
mod hooks {
    use hooks_runtime::prelude::*;

    #[hook(after_system_message, id = "mail_context")]
    pub fn mail_context(_state: &ThreadState, system: &str) -> Option<String> {
        Some(format!("{system}\nMailbox: ..."))
    }
}

use hooks::mail_context as mailbox_summary;
use hooks_runtime::prelude::*;

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    parent_hooks: [
        { hook: hooks::mail_context, reason: "Shows newly synchronized mail to the coordinator." },
        { hook: mailbox_summary, reason: "Summarizes the mailbox for the coordinator." },
    ],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

fn main() {}
