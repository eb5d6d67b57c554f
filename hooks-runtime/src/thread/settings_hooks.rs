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
use serde_json::{Value, json};

use super::ThreadShared;
use super::pipeline::Pipeline;
use crate::approval_records::ApprovalReason;

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
    /// A `permissions.allow` rule selects the call: the tool's own approval is not asked (a
    /// hook's or rule's ask still is).
    pub(crate) pre_approved: bool,
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
        use crate::declarative::{RuleKind, RuleMatch, SettingsEvent};
        let _ = state;
        let Some(registry) = pipeline.shared.runtime.registries.settings.as_ref() else {
            return Ok(Governed::default());
        };
        let shared = pipeline.shared;
        // K10: after a hook's `continue: false` no further call of the turn runs.
        if let Some(stop) = registry.state().stop_pending(&shared.id) {
            return Err(Denial { hook: stop.hook, reason: STOPPING.to_owned() });
        }
        let arguments: Value = serde_json::from_str(&call.function.arguments).unwrap_or_else(|_| json!({}));
        let name = &call.function.name;
        let mut governed = Governed::default();
        let hooks = registry.hooks();
        if !hooks.is_empty() {
            let transcript = transcript(shared, hooks, SettingsEvent::PreToolUse, Some(name), Some(&arguments)).await;
            let input = ToolCallInput {
                once: once_of(shared),
                session_id: &shared.id,
                tool_name: name,
                tool_use_id: &call.id,
                arguments: &arguments,
                transcript_path: transcript.as_ref().and_then(|(_, path)| path.as_str()),
            };
            let runtime = &shared.runtime;
            let tool = runtime.registries.tools.get(name);
            let schema = |arguments: &Value| {
                runtime.governors.schemas.check(tool.as_ref(), arguments).map_err(|violation| violation.to_string())
            };
            let answer = pre_tool_use::evaluate(hooks, &input, &cwd(), &schema).await;
            tell_person(shared, "PreToolUse", answer.messages);
            for stop in answer.stops {
                request_stop(shared, "PreToolUse", stop);
            }
            governed.asked = match answer.verdict {
                ToolVerdict::Allow => Vec::new(),
                ToolVerdict::Deny { hook, reason } => {
                    // The audit line of a refusal: which call and why, never its arguments.
                    tracing::info!(target: "hooks_runtime::thread", thread = %shared.id, call = %call.id, "the PreToolUse hook {hook} denied the tool call {name}: {reason}");
                    return Err(Denial { hook, reason });
                }
                ToolVerdict::Ask(given) => {
                    given.into_iter().map(|given| ApprovalReason::new(Some(&given.hook), given.reason)).collect()
                }
            };
            governed.context = answer.context;
            governed.rewritten = answer.arguments.map(|arguments| {
                let mut call = call.clone();
                call.function.arguments = arguments.to_string();
                call
            });
        }
        // K9: the file's `permissions` on the arguments as the hooks left them, deny > ask >
        // allow; a hook's allow skips neither a deny nor an ask rule.
        let arguments = match &governed.rewritten {
            Some(rewritten) => serde_json::from_str(&rewritten.function.arguments).unwrap_or(arguments),
            None => arguments,
        };
        match registry.permissions().decide(name, &arguments) {
            Some(RuleMatch { kind: RuleKind::Deny, id, rule, reason }) => {
                tracing::info!(target: "hooks_runtime::thread", thread = %shared.id, call = %call.id, "the settings rule {id} `{rule}` denied the tool call {name}");
                return Err(Denial { hook: id, reason });
            }
            Some(RuleMatch { kind: RuleKind::Ask, id, reason, .. }) => {
                governed.asked.push(ApprovalReason::new(Some(&id), reason))
            }
            Some(RuleMatch { kind: RuleKind::Allow, .. }) => governed.pre_approved = true,
            None => {}
        }
        Ok(governed)
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
        let verdict = fire(pipeline.shared, hooks, event, Some(&call.function.name), Some(&tool_input), fields).await;
        for stop in verdict.stops {
            request_stop(pipeline.shared, event.name(), stop);
        }
        let mut notes: Vec<String> =
            verdict.blocks.into_iter().map(|reason| format!("A hook says: {reason}")).collect();
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

/// What a `PermissionRequest` hook decided for a call about to wait for approval. Only
/// settings hooks (feature `declarative`) decide one.
#[cfg_attr(not(feature = "declarative"), allow(dead_code))]
pub(crate) enum PermissionAnswer {
    /// Approved by the hook: run with these arguments.
    Allow { hook: String, arguments: Value },
    /// Denied by the hook, for this reason.
    Deny(Denial),
}

/// K11: `PermissionRequest` for a call about to wait for a person (`reasons` say who asked):
/// a hook's `allow` or `deny` decides the approval at once, in the hook's name (deny >
/// allow); `None` leaves it to a person.
pub(crate) async fn permission_request(
    pipeline: &Pipeline<'_>,
    call: &HookToolCall,
    arguments: &Value,
    reasons: &[ApprovalReason],
) -> Option<PermissionAnswer> {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        let shared = pipeline.shared;
        let hooks = settings(shared)?;
        let event = SettingsEvent::PermissionRequest;
        let name = call.function.name.as_str();
        let suggestions: Vec<Value> =
            reasons.iter().map(|reason| json!({"hook": reason.hook, "reason": reason.reason})).collect();
        let fields = vec![
            ("tool_name", Value::from(name)),
            ("tool_input", arguments.clone()),
            ("tool_use_id", Value::from(call.id.as_str())),
            ("permission_suggestions", Value::Array(suggestions)),
        ];
        let verdict = fire(shared, hooks, event, Some(name), Some(arguments), fields).await;
        let (permission, given) = verdict.permission?;
        let first = given.into_iter().next()?;
        match permission {
            crate::declarative::Permission::Deny => {
                tracing::info!(target: "hooks_runtime::thread", thread = %shared.id, call = %call.id, "the PermissionRequest hook {} denied the approval of {name}", first.hook);
                let reason = if first.reason.trim().is_empty() {
                    "denied by a PermissionRequest hook".to_owned()
                } else {
                    first.reason
                };
                Some(PermissionAnswer::Deny(Denial { hook: first.hook, reason }))
            }
            crate::declarative::Permission::Allow => {
                tracing::info!(target: "hooks_runtime::thread", thread = %shared.id, call = %call.id, "the PermissionRequest hook {} approved {name}", first.hook);
                let arguments = verdict.updated_input.map_or_else(|| arguments.clone(), Value::Object);
                Some(PermissionAnswer::Allow { hook: first.hook, arguments })
            }
            _ => None,
        }
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (pipeline, call, arguments, reasons);
        None
    }
}

/// K11: `Notification` for a call that now waits for a person; observes only (a
/// `systemMessage` still reaches the person).
pub(crate) async fn notify_waiting(shared: &ThreadShared, tool: &str) {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        let Some(hooks) = settings(shared) else { return };
        let event = SettingsEvent::Notification;
        let fields = vec![
            ("message", Value::from(format!("Claude needs your permission to use {tool}"))),
            ("notification_type", Value::from("permission_prompt")),
        ];
        fire(shared, hooks, event, Some("permission_prompt"), None, fields).await;
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (shared, tool);
    }
}

/// K11: `SubagentStart` for a subagent's new child thread: its context, to store.
pub(crate) async fn subagent_started(shared: &ThreadShared) -> Option<String> {
    #[cfg(feature = "declarative")]
    {
        use crate::declarative::SettingsEvent;
        let hooks = settings(shared)?;
        let event = SettingsEvent::SubagentStart;
        let agent = shared.agent.current().def.name;
        let fields = vec![("agent_id", Value::from(shared.id.as_str())), ("agent_type", Value::from(agent))];
        fire(shared, hooks, event, Some(agent), None, fields).await.context()
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = shared;
        None
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
        let verdict = fire(shared, hooks, event, None, None, vec![("prompt", Value::from(prompt))]).await;
        let context = verdict.context();
        let mut reasons = verdict.blocks;
        for stop in verdict.stops {
            // The message is not stored and no run starts: the stop is already carried out.
            emit_stop(shared, event.name(), &stop);
            reasons.push(stop.reason);
        }
        if !reasons.is_empty() {
            let reason = reasons.join("; ");
            tracing::warn!(target: "hooks_runtime::thread", thread = %shared.id, "a UserPromptSubmit hook blocked a user message: {reason}");
            return PromptCheck::Blocked(reason);
        }
        PromptCheck::Pass(context)
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
        fire(shared, hooks, event, Some("startup"), None, vec![("source", json!("startup"))]).await.context()
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
        let fields =
            vec![("stop_hook_active", Value::Bool(stop_hook_active)), ("last_assistant_message", json!(reply))];
        let verdict = fire(shared, hooks, event, None, None, fields).await;
        // `continue: false` ends the turn, which was ending anyway: its reason is the person's.
        for stop in &verdict.stops {
            emit_stop(shared, event.name(), stop);
        }
        (verdict.stops.is_empty() && !verdict.blocks.is_empty()).then(|| verdict.blocks.join("\n"))
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = (shared, reply, stop_hook_active);
        None
    }
}

/// The reason a call is denied with once a hook has stopped the turn.
#[cfg(feature = "declarative")]
const STOPPING: &str = "the turn is stopping: a hook answered `continue: false`";

/// Whether a settings hook asked the turn of this thread to stop (`continue: false` from a
/// `PreToolUse` or `PostToolUse` hook); taken, so the turn acts on it once.
pub(crate) fn stop_requested(shared: &ThreadShared) -> bool {
    #[cfg(feature = "declarative")]
    {
        state_of(shared).and_then(|state| state.take_stop(&shared.id)).is_some()
    }
    #[cfg(not(feature = "declarative"))]
    {
        let _ = shared;
        false
    }
}

/// Fires `event`'s hooks on `fields`, plus the fields every event has and `transcript_path`
/// when a selected hook may read it; each `systemMessage` goes on to the person.
#[cfg(feature = "declarative")]
async fn fire(
    shared: &ThreadShared,
    hooks: &[crate::declarative::SettingsHook],
    event: crate::declarative::SettingsEvent,
    subject: Option<&str>,
    tool_input: Option<&Value>,
    mut fields: Vec<(&'static str, Value)>,
) -> crate::declarative::SettingsVerdict {
    fields.extend(transcript(shared, hooks, event, subject, tool_input).await);
    let cwd = cwd();
    let input = crate::declarative::settings_input(event, &shared.id, &cwd, fields);
    let mut verdict =
        crate::declarative::fire_settings(hooks, once_of(shared), event, subject, tool_input, &input, &cwd, None).await;
    tell_person(shared, event.name(), std::mem::take(&mut verdict.messages));
    verdict
}

/// K7: `transcript_path` and the file it names, the thread's history as the store holds it
/// now, in Claude Code's transcript shape. Written only when a hook that can run is selected
/// (it may read the file); `None` otherwise, or when the file cannot be written (a WARN: the
/// hooks still run, without the field).
#[cfg(feature = "declarative")]
async fn transcript(
    shared: &ThreadShared,
    hooks: &[crate::declarative::SettingsHook],
    event: crate::declarative::SettingsEvent,
    subject: Option<&str>,
    tool_input: Option<&Value>,
) -> Option<(&'static str, Value)> {
    let reads = hooks.iter().any(|hook| hook.cannot_run().is_none() && hook.selects(event, subject, tool_input));
    let state = state_of(shared)?;
    if !reads {
        return None;
    }
    let written = async {
        let path = state.transcript_path(&shared.id)?;
        let messages = shared.runtime.store.messages(&shared.id).await.map_err(std::io::Error::other)?;
        let text = crate::declarative::render_transcript(&shared.id, &cwd(), &messages);
        // Off the async workers: a long history is a large file.
        let target = path.clone();
        tokio::task::spawn_blocking(move || crate::declarative::write_transcript(&target, &text))
            .await
            .map_err(std::io::Error::other)??;
        Ok::<_, std::io::Error>(path)
    };
    match written.await {
        Ok(path) => Some(("transcript_path", Value::from(path.to_string_lossy().into_owned()))),
        Err(error) => {
            tracing::warn!(target: "hooks_runtime::thread", thread = %shared.id, "[HOOK] the transcript for {event} hooks could not be written: {error}");
            None
        }
    }
}

/// Each `systemMessage` to the person, as a thread event; never to the model.
#[cfg(feature = "declarative")]
fn tell_person(shared: &ThreadShared, event: &str, messages: Vec<crate::declarative::Given>) {
    for given in messages {
        tracing::info!(target: "hooks_runtime::thread", thread = %shared.id, "[HOOK] {} ({event}) says to the person: {}", given.hook, given.reason);
        let data = json!({"hook": given.hook, "event": event, "message": given.reason});
        shared.events.emit(crate::events::ThreadEvent::Custom {
            event: crate::declarative::SETTINGS_MESSAGE_EVENT.to_owned(),
            data,
        });
    }
}

/// A hook's `continue: false`: its `stopReason` to the person, and the turn stops at its next
/// step (no further tool call of it runs).
#[cfg(feature = "declarative")]
fn request_stop(shared: &ThreadShared, event: &str, stop: crate::declarative::Given) {
    emit_stop(shared, event, &stop);
    if let Some(state) = state_of(shared) {
        state.request_stop(&shared.id, stop);
    }
}

#[cfg(feature = "declarative")]
fn emit_stop(shared: &ThreadShared, event: &str, stop: &crate::declarative::Given) {
    tracing::info!(target: "hooks_runtime::thread", thread = %shared.id, "[HOOK] {} ({event}) stops the turn: {}", stop.hook, stop.reason);
    let data = json!({"hook": stop.hook, "event": event, "reason": stop.reason});
    shared
        .events
        .emit(crate::events::ThreadEvent::Custom { event: crate::declarative::SETTINGS_STOP_EVENT.to_owned(), data });
}

/// The thread a hook fires in, for its `once`.
#[cfg(feature = "declarative")]
fn once_of(shared: &ThreadShared) -> Option<(&crate::declarative::SettingsState, &str)> {
    Some((state_of(shared)?, shared.id.as_str()))
}

#[cfg(feature = "declarative")]
fn state_of(shared: &ThreadShared) -> Option<&crate::declarative::SettingsState> {
    Some(shared.runtime.registries.settings.as_ref()?.state())
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
    let hooks = shared.runtime.registries.settings.as_ref()?.hooks();
    (!hooks.is_empty()).then_some(hooks)
}

/// The process working directory, where the format runs its commands.
#[cfg(feature = "declarative")]
fn cwd() -> std::path::PathBuf {
    std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."))
}
