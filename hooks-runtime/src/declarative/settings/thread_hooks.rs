//! Where the hooks of a Claude Code-format settings file act on a thread
//! (`RuntimeBuilder::settings_hooks`): every agent, subagent threads included. The format
//! plugs into the runtime through its traits: its deciders join the admission pipeline
//! (`deciders.rs`), and [`SettingsHooks`] is the thread's [`ThreadHooks`].
//!
//! | event | point |
//! |---|---|
//! | `PreToolUse` | a decider of the admission pipeline, after the authorizer, before the guards |
//! | `PermissionRequest` | a decider of the admission pipeline's ask stage |
//! | `PostToolUse` / `PostToolUseFailure` | [`ThreadHooks::after_tool_call`], on the result the model reads |
//! | `UserPromptSubmit` | [`ThreadHooks::user_prompt`], before a sent user message is stored |
//! | `SessionStart` | [`ThreadHooks::session_started`], after `after_thread_created` |
//! | `Stop` / `SubagentStop` | [`ThreadHooks::stop_continues`], when a turn is about to end with a reply |

use async_trait::async_trait;
use hooks_core::{HookToolCall, HookToolResult, MessageRecord, Role};
use serde_json::{Value, json};

use super::event::SettingsEvent;
use super::fire::{Given, Verdict};
use super::hook::SettingsHook;
use super::settings_hooks::SettingsHooks;
use super::state::SettingsState;
use crate::events::ThreadEvent;
use crate::thread_side::{PromptCheck, ThreadHooks, ThreadSide, add_context};

/// The name of the [`ThreadEvent::Custom`](crate::ThreadEvent::Custom) that carries a settings
/// hook's `systemMessage` to the person (never to the model): data `{"hook", "event", "message"}`.
///
/// ```
/// assert_eq!(hooks_runtime::declarative::SETTINGS_MESSAGE_EVENT, "settings_hook_message");
/// ```
pub const SETTINGS_MESSAGE_EVENT: &str = "settings_hook_message";

/// The name of the [`ThreadEvent::Custom`](crate::ThreadEvent::Custom) that carries the
/// `stopReason` of a settings hook that answered `continue: false` to the person (never to the
/// model): data `{"hook", "event", "reason"}`. The turn then stops, `stopped (hook_stopped)`.
///
/// ```
/// assert_eq!(hooks_runtime::declarative::SETTINGS_STOP_EVENT, "settings_hook_stop");
/// ```
pub const SETTINGS_STOP_EVENT: &str = "settings_hook_stop";

/// The field a message stored from a settings hook's context carries, with the event's name.
pub(crate) const CONTEXT_MARKER: &str = "settings_hook";

#[async_trait]
impl ThreadHooks for SettingsHooks {
    /// `PostToolUse` (or `PostToolUseFailure`) for a call that ran: context and block reasons
    /// are added to the text the model reads.
    async fn after_tool_call(&self, thread: &dyn ThreadSide, call: &HookToolCall, result: &mut HookToolResult) {
        let Some(hooks) = selected(self) else { return };
        let success = result.is_success();
        let event = if success { SettingsEvent::PostToolUse } else { SettingsEvent::PostToolUseFailure };
        let tool_input: Value = serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
        let tool_input = if tool_input.is_object() { tool_input } else { json!({}) };
        let mut fields = vec![
            ("tool_name", Value::from(call.function.name.as_str())),
            ("tool_input", tool_input.clone()),
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
        let verdict = fire(self, thread, hooks, event, Some(&call.function.name), Some(&tool_input), fields).await;
        for stop in verdict.stops {
            request_stop(self, thread, event.name(), stop);
        }
        let mut notes: Vec<String> =
            verdict.blocks.into_iter().map(|reason| format!("A hook says: {reason}")).collect();
        notes.extend(verdict.contexts);
        if !notes.is_empty() {
            add_context(result, &notes.join("\n"));
        }
    }

    /// `UserPromptSubmit` for a user message about to be stored.
    async fn user_prompt(&self, thread: &dyn ThreadSide, record: &MessageRecord) -> PromptCheck {
        if record.role != Role::User {
            return PromptCheck::Pass(None);
        }
        let Some(hooks) = selected(self) else { return PromptCheck::Pass(None) };
        let event = SettingsEvent::UserPromptSubmit;
        let prompt = record.content.clone().unwrap_or_default();
        let verdict = fire(self, thread, hooks, event, None, None, vec![("prompt", Value::from(prompt))]).await;
        let context = verdict.context();
        let mut reasons = verdict.blocks;
        for stop in verdict.stops {
            // The message is not stored and no run starts: the stop is already carried out.
            emit_stop(thread, event.name(), &stop);
            reasons.push(stop.reason);
        }
        if !reasons.is_empty() {
            let reason = reasons.join("; ");
            tracing::warn!(target: "hooks_runtime::thread", thread = %thread.id(), "a UserPromptSubmit hook blocked a user message: {reason}");
            return PromptCheck::Blocked(reason);
        }
        PromptCheck::Pass(context)
    }

    /// `SessionStart` (source `startup`) for a new top-level thread: its context, to store.
    async fn session_started(&self, thread: &dyn ThreadSide) -> Option<String> {
        let hooks = selected(self)?;
        let event = SettingsEvent::SessionStart;
        fire(self, thread, hooks, event, Some("startup"), None, vec![("source", json!("startup"))]).await.context()
    }

    /// `SubagentStart` for a subagent's new child thread: its context, to store.
    async fn subagent_started(&self, thread: &dyn ThreadSide) -> Option<String> {
        let hooks = selected(self)?;
        let event = SettingsEvent::SubagentStart;
        let agent = thread.agent_name();
        let fields = vec![("agent_id", Value::from(thread.id())), ("agent_type", Value::from(agent))];
        fire(self, thread, hooks, event, Some(agent), None, fields).await.context()
    }

    /// `Stop` (`SubagentStop` in a subagent's thread) for a turn about to end with `reply`:
    /// the reason to go on with, when a hook blocks the stop and none says `continue: false`.
    async fn stop_continues(&self, thread: &dyn ThreadSide, reply: &str, stop_hook_active: bool) -> Option<String> {
        let hooks = selected(self)?;
        let event = if thread.is_subagent() { SettingsEvent::SubagentStop } else { SettingsEvent::Stop };
        let fields =
            vec![("stop_hook_active", Value::Bool(stop_hook_active)), ("last_assistant_message", json!(reply))];
        let verdict = fire(self, thread, hooks, event, None, None, fields).await;
        // `continue: false` ends the turn, which was ending anyway: its reason is the person's.
        for stop in &verdict.stops {
            emit_stop(thread, event.name(), stop);
        }
        (verdict.stops.is_empty() && !verdict.blocks.is_empty()).then(|| verdict.blocks.join("\n"))
    }

    /// Whether a settings hook asked the turn of this thread to stop (`continue: false` from a
    /// `PreToolUse` or `PostToolUse` hook).
    fn stop_requested(&self, thread: &dyn ThreadSide) -> bool {
        self.state().take_stop(thread.id()).is_some()
    }

    /// `Notification` for a call that now waits for a person; observes only (a
    /// `systemMessage` still reaches the person).
    async fn notify_waiting(&self, thread: &dyn ThreadSide, tool: &str) {
        let Some(hooks) = selected(self) else { return };
        let event = SettingsEvent::Notification;
        let fields = vec![
            ("message", Value::from(format!("Claude needs your permission to use {tool}"))),
            ("notification_type", Value::from("permission_prompt")),
        ];
        fire(self, thread, hooks, event, Some("permission_prompt"), None, fields).await;
    }

    fn context_marker(&self) -> &'static str {
        CONTEXT_MARKER
    }
}

/// The hooks, `None` when there are none.
pub(super) fn selected(settings: &SettingsHooks) -> Option<&[SettingsHook]> {
    let hooks = settings.hooks();
    (!hooks.is_empty()).then_some(hooks)
}

/// Fires `event`'s hooks on `fields`, plus the fields every event has and `transcript_path`
/// when a selected hook may read it; each `systemMessage` goes on to the person.
pub(super) async fn fire(
    settings: &SettingsHooks,
    thread: &dyn ThreadSide,
    hooks: &[SettingsHook],
    event: SettingsEvent,
    subject: Option<&str>,
    tool_input: Option<&Value>,
    mut fields: Vec<(&'static str, Value)>,
) -> Verdict {
    fields.extend(transcript(settings, thread, hooks, event, subject, tool_input).await);
    let cwd = cwd();
    let input = super::fire::input(event, thread.id(), &cwd, fields);
    let once = Some((settings.state(), thread.id()));
    let mut verdict = super::fire::fire(hooks, once, event, subject, tool_input, &input, &cwd, None).await;
    tell_person(thread, event.name(), std::mem::take(&mut verdict.messages));
    verdict
}

/// K7: `transcript_path` and the file it names, the thread's history as the store holds it
/// now, in Claude Code's transcript shape. Written only when a hook that can run is selected
/// (it may read the file); `None` otherwise, or when the file cannot be written (a WARN: the
/// hooks still run, without the field).
pub(super) async fn transcript(
    settings: &SettingsHooks,
    thread: &dyn ThreadSide,
    hooks: &[SettingsHook],
    event: SettingsEvent,
    subject: Option<&str>,
    tool_input: Option<&Value>,
) -> Option<(&'static str, Value)> {
    let reads = hooks.iter().any(|hook| hook.cannot_run().is_none() && hook.selects(event, subject, tool_input));
    if !reads {
        return None;
    }
    let state: &SettingsState = settings.state();
    let written = async {
        let path = state.transcript_path(thread.id())?;
        let messages = thread.history().await.map_err(std::io::Error::other)?;
        let text = super::transcript::render(thread.id(), &cwd(), &messages);
        // Off the async workers: a long history is a large file.
        let target = path.clone();
        tokio::task::spawn_blocking(move || super::transcript::write(&target, &text))
            .await
            .map_err(std::io::Error::other)??;
        Ok::<_, std::io::Error>(path)
    };
    match written.await {
        Ok(path) => Some(("transcript_path", Value::from(path.to_string_lossy().into_owned()))),
        Err(error) => {
            tracing::warn!(target: "hooks_runtime::thread", thread = %thread.id(), "[HOOK] the transcript for {event} hooks could not be written: {error}");
            None
        }
    }
}

/// Each `systemMessage` to the person, as a thread event; never to the model.
pub(super) fn tell_person(thread: &dyn ThreadSide, event: &str, messages: Vec<Given>) {
    for given in messages {
        tracing::info!(target: "hooks_runtime::thread", thread = %thread.id(), "[HOOK] {} ({event}) says to the person: {}", given.hook, given.reason);
        let data = json!({"hook": given.hook, "event": event, "message": given.reason});
        thread.emit(ThreadEvent::Custom { event: SETTINGS_MESSAGE_EVENT.to_owned(), data });
    }
}

/// A hook's `continue: false`: its `stopReason` to the person, and the turn stops at its next
/// step (no further tool call of it runs).
pub(super) fn request_stop(settings: &SettingsHooks, thread: &dyn ThreadSide, event: &str, stop: Given) {
    emit_stop(thread, event, &stop);
    settings.state().request_stop(thread.id(), stop);
}

fn emit_stop(thread: &dyn ThreadSide, event: &str, stop: &Given) {
    tracing::info!(target: "hooks_runtime::thread", thread = %thread.id(), "[HOOK] {} ({event}) stops the turn: {}", stop.hook, stop.reason);
    let data = json!({"hook": stop.hook, "event": event, "reason": stop.reason});
    thread.emit(ThreadEvent::Custom { event: SETTINGS_STOP_EVENT.to_owned(), data });
}

/// The process working directory, where the format runs its commands.
pub(super) fn cwd() -> std::path::PathBuf {
    std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."))
}
