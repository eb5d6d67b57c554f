//! The guide's composition examples in Rust: `duplicate_finder` (a prompt in `prompts` and an
//! agent in `agents` with the same name), `mail_agent` requiring `mail_context` of its parent,
//! and `coordinator` composing it. Hooks live in a `hooks` module and are referenced by path.
//! `main` checks the defaults: a relationship is named after its agent unless `as` says
//! otherwise, and a requirement's stage is `after_parent` unless set.

mod hooks {
    use hooks_runtime::prelude::*;

    #[hook(before_store_tool_result, id = "redact_emails")]
    pub fn redact(_state: &ThreadState, _call: &ToolCallRecord, mut result: HookToolResult) -> HookToolResult {
        result.result = result.result.map(|text| text.replace('@', " at "));
        result
    }

    #[hook(after_system_message, id = "mail_context")]
    pub async fn mail_context(state: &ThreadState, system: &str) -> Option<String> {
        let summary = state.get_value("mail.summary").await?;
        Some(format!("{system}\n\nMailbox: {}", summary.as_str().unwrap_or_default()))
    }

    #[hook(tool_call_done, id = "mail_audit")]
    pub fn mail_audit(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

    #[hook(after_tool_call_success, id = "log_tool_calls")]
    pub fn log_tool_calls(
        _state: &ThreadState,
        _call: &HookToolCall,
        _result: &HookToolResult,
    ) -> Option<HookToolResult> {
        None
    }
}

mod prompts {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: duplicate_finder,
        tool_description: "Finds and closes a duplicate GitHub issue",
        model: "tool-reasoning",
        prompt: "You check whether a GitHub issue duplicates an older open issue.",
        include_chat: true,
        include_past_tools: true,
        tools: ["get_github_issue", "search_github_issues", "close_as_duplicate"],
        hooks: [crate::hooks::redact_emails],
    }

    define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail.", tools: ["list_mail"], hooks: [] }

    define_prompt! { name: coordinator_prompt, model: "m", prompt: "Coordinate." }
}

mod agents {
    use crate::hooks::{self, mail_context};
    use crate::prompts;
    use hooks_runtime::prelude::*;

    define_agent! {
        name: duplicate_finder,
        side_a: { prompt: prompts::duplicate_finder, stop_on_response: true, max_steps: 6 },
        side_b: { human: true },
    }

    define_agent! {
        name: mail_agent,
        expose_as_tool: true,
        tool_description: "Reads and summarizes the mailbox.",
        parent_hooks: [
            { hook: mail_context, reason: "Shows newly synchronized mail to the coordinator.", stage: before_parent },
            { hook: hooks::mail_audit, reason: "Keeps the mail audit log complete." },
        ],
        side_a: { prompt: prompts::mail_prompt },
        side_b: { human: true },
    }

    define_agent! {
        name: coordinator,
        side_a: {
            prompt: prompts::coordinator_prompt,
            stop_on_response: true,
            max_steps: 6,
            subagents: [{ agent: mail_agent, as: mailbox, optional: true, hidden: false, max_instances: 1 }],
        },
        side_b: { human: true, subagents: [{ agent: self::mail_agent }] },
        hooks: [hooks::log_tool_calls],
    }

    define_agent! {
        name: audited_agent,
        expose_as_tool: true,
        parent_hooks: [{ hook: crate::hooks::mail_audit, reason: "Audits the parent's tool calls.", stage: after_parent }],
        side_a: { prompt: prompts::mail_prompt },
        side_b: { human: true },
    }

    define_agent! {
        name: string_named_coordinator,
        side_a: { prompt: crate::prompts::coordinator_prompt, subagents: [{ agent: crate::agents::mail_agent, as: "mailbox" }] },
    }
}

use hooks_runtime::prelude::*;
use hooks_runtime::definition::{ParentHookStage, Participant};

fn main() {
    // The same-named prompt and agent, in their own modules.
    let finder = <agents::duplicate_finder as Agent>::DEF;
    assert_eq!(finder.name, "duplicate_finder");
    assert!(finder.side_a.stop_on_response);
    assert_eq!(finder.side_a.max_steps, Some(6));
    let prompt = finder.side_a.prompt().expect("side A runs a prompt");
    assert!(std::ptr::eq(prompt, <prompts::duplicate_finder as Prompt>::DEF));
    assert_eq!(prompt.name, "duplicate_finder");
    assert_eq!(prompt.tool_description, Some("Finds and closes a duplicate GitHub issue"));
    assert!(prompt.include_chat && prompt.include_past_tools);
    assert_eq!(prompt.tools, ["get_github_issue", "search_github_issues", "close_as_duplicate"]);
    assert_eq!(prompt.hooks.iter().map(|h| h.id).collect::<Vec<_>>(), ["redact_emails"]);
    assert!(matches!(finder.side_b.participant, Participant::Human));
    assert!(!finder.side_b.stop_on_response);
    assert_eq!(finder.side_b.max_steps, None);
    assert!(!finder.expose_as_tool);
    assert!(finder.parent_hooks.is_empty());

    // The child: its requirements in order, with stages (default `after_parent`) and reasons.
    let mail = <agents::mail_agent as Agent>::DEF;
    assert!(mail.expose_as_tool);
    assert_eq!(mail.tool_description, Some("Reads and summarizes the mailbox."));
    let requirements: Vec<_> = mail.parent_hooks.iter().map(|r| (r.hook.id, r.stage, r.reason)).collect();
    assert_eq!(
        requirements,
        [
            ("mail_context", ParentHookStage::BeforeParent, "Shows newly synchronized mail to the coordinator."),
            ("mail_audit", ParentHookStage::AfterParent, "Keeps the mail audit log complete."),
        ]
    );
    assert_eq!(ParentHookStage::AfterParent.as_str(), "after_parent");
    let audited = <agents::audited_agent as Agent>::DEF;
    assert_eq!(audited.parent_hooks[0].stage, ParentHookStage::AfterParent);
    assert!(std::ptr::eq(audited.parent_hooks[0].hook, mail.parent_hooks[1].hook));

    // The parent: relationship names default to the agent's name; `as` renames.
    let coordinator = <agents::coordinator as Agent>::DEF;
    assert_eq!(coordinator.side_a.max_steps, Some(6));
    assert!(coordinator.side_a.stop_on_response);
    let [named] = coordinator.side_a.subagents else { panic!("one relationship on side A") };
    assert_eq!(named.name, "mailbox");
    assert!(std::ptr::eq(named.agent, mail));
    assert!(named.optional && !named.hidden);
    assert_eq!(named.max_instances, Some(1));
    let [unnamed] = coordinator.side_b.subagents else { panic!("one relationship on side B") };
    assert_eq!(unnamed.name, "mail_agent");
    assert!(!unnamed.optional && !unnamed.hidden);
    assert_eq!(unnamed.max_instances, None);
    assert_eq!(coordinator.hooks.iter().map(|h| h.id).collect::<Vec<_>>(), ["log_tool_calls"]);
    assert!(coordinator.parent_hooks.is_empty());

    // `as: "mailbox"`, the string form, and `side_b` left out (a person takes it).
    let string_named = <agents::string_named_coordinator as Agent>::DEF;
    assert_eq!(string_named.side_a.subagents[0].name, "mailbox");
    assert!(matches!(string_named.side_b.participant, Participant::Human));
}
