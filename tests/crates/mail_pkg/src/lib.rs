//! The guide's `mail_agent`, packaged as its own crate: it requires `mail_context` on every
//! parent that composes it.

use hooks_runtime::prelude::*;

/// Adds the mailbox summary to the parent's system message.
#[hook(after_system_message, id = "mail_context")]
pub async fn mail_context(state: &ThreadState, system: &str) -> Option<String> {
    let summary = state.get_value("mail.summary").await?;
    Some(format!("{system}\n\nMailbox: {}", summary.as_str().unwrap_or_default()))
}

/// Records each tool call the parent finishes, after the parent's own hooks.
#[hook(tool_call_done, id = "mail_audit")]
pub fn mail_audit(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

define_prompt! {
    name: mail_prompt,
    model: "tool-reasoning",
    prompt: "You read and summarize the mailbox.",
    tools: ["list_mail"],
}

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    tool_description: "Reads and summarizes the mailbox.",
    parent_hooks: [
        { hook: mail_context, reason: "Shows newly synchronized mail to the coordinator.", stage: before_parent },
        { hook: mail_audit, reason: "Keeps the mail audit log complete." },
    ],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}
