//! Where the hooks of a Claude Code-format settings file act on a thread
//! (`RuntimeBuilder::settings_hooks`): every agent, subagent threads included.
//!
//! | event | point |
//! |---|---|
//! | `PreToolUse` | [`govern_tool_call`], after `authorize_tools`, before the gate's guards and hooks |
//! | `PostToolUse` / `PostToolUseFailure` | [`after_tool_call`], on the result the model reads |
//! | `UserPromptSubmit` | [`user_prompt`], before a sent user message is stored |
//! | `SessionStart` | [`session_started`], after `after_thread_created` |
//! | `Stop` / `SubagentStop` | [`stop_continues`], when a turn is about to end with a reply |
//!
//! Without the `declarative` feature there are no such hooks and every function here lets
//! everything through unchanged.

use std::future::Future;

use hooks_core::{HookToolCall, HookToolResult, MessageRecord, Role, ThreadState};
#[cfg(feature = "declarative")]
use serde_json::Value;
use serde_json::json;

use super::ThreadShared;
use super::pipeline::Pipeline;
use crate::approvals::ApprovalReason;

/// The field a message stored from a settings hook's context carries, with the event's name.
pub(crate) const CONTEXT_MARKER: &str = "settings_hook";

/// What the `PreToolUse` hooks let through to the gate: the arguments as they rewrote them
/// (`None`: unchanged), context for the model (added to the result), and their asks (empty
/// when none asked), which join the gate's as one approval.
#[derive(Default)]
pub(crate) struct Governed {
    pub(crate) rewritten: Option<HookToolCall>,
    pub(crate) context: Option<String>,
    pub(crate) asked: Vec<ApprovalReason>,
}

/// A `PreToolUse` denial: the call does not run and the gate is not asked.
pub(crate) struct Denial {
    /// The first denying hook's id (`settings:hooks.PreToolUse[0].hooks[0]`).
    pub(crate) hook: String,
    /// Why, for the model.
    pub(crate) reason: String,
}

/// The `PreToolUse` decision for `call`: `Err` when the call must not run. This is the one
/// place where that decision meets the tool path; the gate decides on what it lets through,
/// deny > ask > allow (G4).
///
/// A rewrite (`updatedInput`) must satisfy the tool's parameters schema, as a gate hook's must
/// (G5): one that does not is its hook's failure, so the arguments stay as they were, or the
/// call is denied when that hook fails closed.
pub(crate) async fn govern_tool_call(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
) -> Result<Governed, Denial> {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::pre_tool_use::{self, ToolCallInput, ToolVerdict};
        let _ = state;
        let Some(hooks) = settings(pipeline.shared) else { return Ok(Governed::default()) };
        let arguments: Value = serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
        let input = ToolCallInput {
            session_id: &pipeline.shared.id,
            tool_name: &call.function.name,
            tool_use_id: &call.id,
            arguments: &arguments,
        };
        let runtime = &pipeline.shared.runtime;
        let tool = runtime.tools.get(&call.function.name);
        let schema =
            |arguments: &Value| runtime.schemas.check(tool, arguments).map_err(|violation| violation.to_string());
        let answer = pre_tool_use::evaluate(hooks, &input, &cwd(), &schema).await;
        let name = &call.function.name;
        let asked = match answer.verdict {
            ToolVerdict::Allow => Vec::new(),
            ToolVerdict::Deny { hook, reason } => {
                // The audit line of a refusal: which call and why, never its arguments.
                tracing::info!(target: "hooks_runtime::thread", thread = %pipeline.shared.id, call = %call.id, "the PreToolUse hook {hook} denied the tool call {name}: {reason}");
                return Err(Denial { hook, reason });
            }
            ToolVerdict::Ask(given) => {
                given.into_iter().map(|given| ApprovalReason::new(Some(&given.hook), given.reason)).collect()
            }
        };
        let rewritten = answer.arguments.map(|arguments| {
            let mut call = call.clone();
            call.function.arguments = arguments.to_string();
            call
        });
        Ok(Governed { rewritten, context: answer.context, asked })
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (pipeline, state, call);
        Ok(Governed::default())
    }
}

/// `PostToolUse` (or `PostToolUseFailure`) for a call that ran: context and block reasons are
/// added to the text the model reads.
pub(crate) async fn after_tool_call(pipeline: &Pipeline<'_>, call: &HookToolCall, result: &mut HookToolResult) {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        let Some(hooks) = settings(pipeline.shared) else { return };
        let success = result.is_success();
        let event = if success { SettingsEvent::PostToolUse } else { SettingsEvent::PostToolUseFailure };
        let tool_input: Value = serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
        let mut fields = vec![
            ("tool_name", Value::from(call.function.name.as_str())),
            ("tool_input", if tool_input.is_object() { tool_input } else { json!({}) }),
            ("tool_use_id", Value::from(call.id.as_str())),
        ];
        if success {
            let text = result.result.clone().unwrap_or_default();
            // A tool that answers JSON is seen as that JSON, as the format's tools answer.
            let response = serde_json::from_str::<Value>(&text).unwrap_or(Value::String(text));
            fields.push(("tool_response", response));
        } else {
            fields.push(("error", Value::from(result.error.clone().unwrap_or_default())));
            fields.push(("is_interrupt", Value::Bool(false)));
        }
        let cwd = cwd();
        let input = crate::declarative::settings_input(event, &pipeline.shared.id, &cwd, fields);
        let verdict = crate::declarative::fire_settings(hooks, event, Some(&call.function.name), &input, &cwd).await;
        let mut notes: Vec<String> =
            verdict.blocks.into_iter().map(|reason| format!("A hook says: {reason}")).collect();
        notes.extend(verdict.stops.into_iter().map(|reason| format!("A hook asks to stop: {reason}")));
        notes.extend(verdict.contexts);
        if !notes.is_empty() {
            add_context(result, &notes.join("\n"));
        }
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (pipeline, call, result);
    }
}

/// Appends `context` to the text of `result` that the model reads.
pub(crate) fn add_context(result: &mut HookToolResult, context: &str) {
    let text = if result.is_success() { &mut result.result } else { &mut result.error };
    let text = text.get_or_insert_with(String::new);
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(context);
}

/// What the `UserPromptSubmit` hooks said of a user message.
#[cfg_attr(not(feature = "declarative"), allow(dead_code))]
pub(crate) enum PromptCheck {
    /// Store it; then store this context, if any.
    Pass(Option<String>),
    /// Do not store it, for this reason.
    Blocked(String),
}

/// `UserPromptSubmit` for a user message about to be stored.
pub(crate) async fn user_prompt(shared: &ThreadShared, record: &MessageRecord) -> PromptCheck {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        if record.role != Role::User {
            return PromptCheck::Pass(None);
        }
        let Some(hooks) = settings(shared) else { return PromptCheck::Pass(None) };
        let event = SettingsEvent::UserPromptSubmit;
        let prompt = record.content.clone().unwrap_or_default();
        let cwd = cwd();
        let input = crate::declarative::settings_input(event, &shared.id, &cwd, vec![("prompt", Value::from(prompt))]);
        let verdict = crate::declarative::fire_settings(hooks, event, None, &input, &cwd).await;
        let mut reasons = verdict.blocks;
        reasons.extend(verdict.stops);
        if !reasons.is_empty() {
            let reason = reasons.join("; ");
            tracing::warn!(target: "hooks_runtime::thread", thread = %shared.id, "a UserPromptSubmit hook blocked a user message: {reason}");
            return PromptCheck::Blocked(reason);
        }
        PromptCheck::Pass((!verdict.contexts.is_empty()).then(|| verdict.contexts.join("\n")))
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (shared, record, Role::User);
        PromptCheck::Pass(None)
    }
}

/// `SessionStart` (source `startup`) for a new top-level thread: its context, to store.
pub(crate) async fn session_started(shared: &ThreadShared) -> Option<String> {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        let hooks = settings(shared)?;
        let event = SettingsEvent::SessionStart;
        let cwd = cwd();
        let input = crate::declarative::settings_input(event, &shared.id, &cwd, vec![("source", json!("startup"))]);
        let verdict = crate::declarative::fire_settings(hooks, event, Some("startup"), &input, &cwd).await;
        (!verdict.contexts.is_empty()).then(|| verdict.contexts.join("\n"))
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = shared;
        None
    }
}

/// `Stop` (`SubagentStop` in a subagent's thread) for a turn about to end with `reply`: the
/// reason to go on with, when a hook blocks the stop and none says `continue: false`.
pub(crate) async fn stop_continues(shared: &ThreadShared, reply: &str, stop_hook_active: bool) -> Option<String> {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        let hooks = settings(shared)?;
        let event = if shared.is_subagent() { SettingsEvent::SubagentStop } else { SettingsEvent::Stop };
        let cwd = cwd();
        let fields =
            vec![("stop_hook_active", Value::Bool(stop_hook_active)), ("last_assistant_message", json!(reply))];
        let input = crate::declarative::settings_input(event, &shared.id, &cwd, fields);
        let verdict = crate::declarative::fire_settings(hooks, event, None, &input, &cwd).await;
        (verdict.stops.is_empty() && !verdict.blocks.is_empty()).then(|| verdict.blocks.join("\n"))
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (shared, reply, stop_hook_active);
        None
    }
}

/// Waits for settings hooks unless the run's abort fires first, then `None`: dropping them
/// kills their commands with their process groups, so an abort does not wait out a timeout.
pub(crate) async fn unless_aborted<T>(state: &ThreadState, hooks: impl Future<Output = T>) -> Option<T> {
    let Some(abort) = state.execution.as_ref().map(|execution| execution.abort_signal.clone()) else {
        return Some(hooks.await);
    };
    if abort.is_aborted() {
        return None;
    }
    tokio::select! {
        biased;
        () = super::model_step::aborted(&abort) => None,
        output = hooks => Some(output),
    }
}

/// A message carrying a settings hook's words for the model, marked with the event.
pub(crate) fn context_message(event: &'static str, text: String) -> MessageRecord {
    let mut message = MessageRecord::new(Role::User, text);
    message.extra.insert(CONTEXT_MARKER.into(), json!(event));
    message
}

#[cfg(feature = "declarative")]
fn settings(shared: &ThreadShared) -> Option<&[crate::declarative::SettingsHook]> {
    let hooks = shared.runtime.settings.as_ref()?.settings_hooks();
    (!hooks.is_empty()).then_some(hooks)
}

/// The process working directory, where the format runs its commands.
#[cfg(feature = "declarative")]
fn cwd() -> std::path::PathBuf {
    std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."))
}
