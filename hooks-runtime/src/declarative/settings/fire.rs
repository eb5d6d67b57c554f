//! Firing an event: every matching hook runs at once, on the same JSON input, and their
//! answers combine (deny > ask > allow; a rewrite replaces the input, and two different ones
//! conflict; contexts in file order).

use std::path::Path;

use serde_json::{Map, Value};

use super::answer::{self, Answer, Permission};
use super::runner;
use super::{SettingsEvent, SettingsHook, SettingsState};
use crate::declarative::LOG_TARGET;

pub(crate) use super::state::Given;

/// The runtime's state and the thread an event fires in, for the hooks that run `once`;
/// `None` runs them every time.
pub(crate) type Once<'a> = Option<(&'a SettingsState, &'a str)>;

/// A check of a rewrite: the `updatedInput`s merged so far, `Err` with why they are rejected.
/// Only `PreToolUse` has one (the tool's schema); it must say where, never the values.
pub(crate) type RewriteCheck<'a> = &'a (dyn Fn(&Map<String, Value>) -> Result<(), String> + Sync);

/// The combined answer of one event's matching hooks.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Verdict {
    /// The strongest permission decision and the reasons given at that strength, file order.
    pub(crate) permission: Option<(Permission, Vec<Given>)>,
    /// Reasons of the hooks that blocked (exit 2 or `decision: "block"`), file order.
    pub(crate) blocks: Vec<String>,
    /// The hooks that answered `continue: false`, with their `stopReason`s (for the person).
    pub(crate) stops: Vec<Given>,
    /// The hooks' `systemMessage`s (for the person), file order.
    pub(crate) messages: Vec<Given>,
    /// The `updatedInput` the tool is to get in place of its input, when a hook gave one.
    pub(crate) updated_input: Option<Map<String, Value>>,
    /// Every `additionalContext` (or context text), file order.
    pub(crate) contexts: Vec<String>,
}

impl Verdict {
    /// The hooks' context for the model, one text a line; `None` when none gave any.
    pub(crate) fn context(&self) -> Option<String> {
        (!self.contexts.is_empty()).then(|| self.contexts.join("\n"))
    }
}

/// The event's JSON input: the fields every event has, then `fields`.
pub(crate) fn input(event: SettingsEvent, session_id: &str, cwd: &Path, fields: Vec<(&'static str, Value)>) -> Vec<u8> {
    let mut input = Map::new();
    input.insert("session_id".into(), Value::from(session_id));
    input.insert("hook_event_name".into(), Value::from(event.name()));
    input.insert("cwd".into(), Value::from(cwd.to_string_lossy().into_owned()));
    input.insert("permission_mode".into(), Value::from("default"));
    for (key, value) in fields {
        input.insert(key.into(), value);
    }
    serde_json::to_vec(&Value::Object(input)).unwrap_or_default()
}

/// Runs the hooks of `event` that select `subject` (and, by their `if`, `tool_input`), all at
/// once, and combines their answers, each hook's rewrite checked by `check` (if any) as it is
/// merged.
#[allow(clippy::too_many_arguments)] // each is one part of the event, named at the call
pub(crate) async fn fire(
    hooks: &[SettingsHook],
    once: Once<'_>,
    event: SettingsEvent,
    subject: Option<&str>,
    tool_input: Option<&Value>,
    input: &[u8],
    cwd: &Path,
    check: Option<RewriteCheck<'_>>,
) -> Verdict {
    // An entry that cannot run observes nothing (its WARN was the load's), but one that guards
    // denies what its matcher selects: skipping a guard is failing open.
    let selected: Vec<&SettingsHook> = hooks
        .iter()
        .filter(|hook| hook.selects(event, subject, tool_input))
        .filter(|hook| hook.cannot_run.is_none() || event == SettingsEvent::PreToolUse)
        // K12: a `once` hook runs the first time it is selected in a thread, never again.
        .filter(|hook| !hook.once || once.is_none_or(|(state, thread)| state.first_time(thread, &hook.location)))
        .collect();
    // K12: an `async` hook runs without holding the event; its output is ignored.
    let (background, selected): (Vec<&SettingsHook>, Vec<&SettingsHook>) =
        selected.into_iter().partition(|hook| hook.run_async && hook.cannot_run.is_none());
    for hook in background {
        let (hook, input) = (hook.clone(), input.to_vec());
        let cwd = hook.project_dir.clone().unwrap_or_else(|| cwd.to_path_buf());
        tokio::spawn(async move {
            let run = match &hook.http {
                Some(target) => target.post(&input, hook.timeout).await,
                None => {
                    runner::run(
                        &hook.command,
                        &input,
                        &cwd,
                        hook.plugin_root.as_deref(),
                        hook.timeout,
                        &hook.location,
                        &hook.secret_env,
                    )
                    .await
                }
            };
            tracing::debug!(target: LOG_TARGET, "[HOOK] async settings hook {} ended: {:?}", hook.location, run.end);
        });
    }
    if selected.is_empty() {
        return Verdict::default();
    }
    let runs = selected.iter().map(|hook| async move {
        if let Some(why) = &hook.cannot_run {
            let reason = format!(
                "the settings hook {} cannot run as written ({why}); it guards this tool, so the call is denied",
                hook.location
            );
            return Answer { permission: Some((Permission::Deny, reason)), ..Answer::default() };
        }
        let run = match &hook.http {
            Some(target) => target.post(input, hook.timeout).await,
            None => {
                let cwd = hook.project_dir.as_deref().unwrap_or(cwd);
                runner::run(&hook.command, input, cwd, hook.plugin_root.as_deref(), hook.timeout, &hook.location, &hook.secret_env)
                    .await
            }
        };
        let answer = answer::read(event, &run, hook.fail_closed);
        if !answer.suppress_output && !run.stdout.trim().is_empty() {
            tracing::debug!(target: LOG_TARGET, "[HOOK] settings hook {} printed: {}", hook.location, run.stdout.trim());
        }
        answer
    });
    let answers = futures_util::future::join_all(runs).await;
    combine(event, selected.into_iter().zip(answers), check)
}

/// Combines answers given in file order. A hook whose `updatedInput` differs from an earlier
/// hook's, or whose rewrite `check` rejects, has failed: its rewrite is dropped (a denial if it
/// fails closed), never silently applied over the earlier one.
pub(crate) fn combine<'h>(
    event: SettingsEvent,
    answers: impl IntoIterator<Item = (&'h SettingsHook, Answer)>,
    check: Option<RewriteCheck<'_>>,
) -> Verdict {
    let mut verdict = Verdict::default();
    // Which hook gave the input, to name it in a conflict.
    let mut set_by: Option<String> = None;
    for (hook, mut answer) in answers {
        if let Some(update) = answer.updated_input.take()
            && let Err(failure) = merge(&mut verdict, &mut set_by, hook, update, check)
        {
            let failed = answer::failed(event, failure, hook.fail_closed);
            answer.failure = failed.failure;
            answer.permission = strongest(answer.permission, failed.permission);
            answer.block = answer.block.or(failed.block);
        }
        if let Some(failure) = &answer.failure {
            let how =
                if hook.fail_closed { "it fails closed, so it denies" } else { "it fails open, so it is ignored" };
            let stderr = match &answer.failure_stderr {
                Some(stderr) => format!(" (its stderr, {} bytes, is logged at DEBUG)", stderr.len()),
                None => String::new(),
            };
            tracing::warn!(
                target: LOG_TARGET,
                "[HOOK] settings hook {} (`{}`) failed: {failure}; {how}{stderr}",
                hook.location,
                hook.command
            );
            if let Some(stderr) = &answer.failure_stderr {
                tracing::debug!(target: LOG_TARGET, "[HOOK] settings hook {} wrote to stderr:\n{stderr}", hook.location);
            }
        }
        if let Some((permission, reason)) = answer.permission {
            let given = Given { hook: hook.id(), reason };
            match &mut verdict.permission {
                Some((current, reasons)) if *current == permission => reasons.push(given),
                Some((current, _)) if *current > permission => {}
                slot => *slot = Some((permission, vec![given])),
            }
        }
        verdict.blocks.extend(answer.block);
        verdict.stops.extend(answer.stop.map(|reason| Given { hook: hook.id(), reason }));
        verdict.messages.extend(answer.system_message.map(|reason| Given { hook: hook.id(), reason }));
        verdict.contexts.extend(answer.context.filter(|context| !context.trim().is_empty()));
    }
    verdict
}

/// Takes one hook's `update` as the input the tool is to get (it replaces the input whole, as
/// in the format's own runner), or says why it cannot: an earlier hook gave another input, or
/// `check` rejects it.
fn merge(
    verdict: &mut Verdict,
    set_by: &mut Option<String>,
    hook: &SettingsHook,
    update: Map<String, Value>,
    check: Option<RewriteCheck<'_>>,
) -> Result<(), String> {
    if let Some(earlier) = &verdict.updated_input {
        if *earlier == update {
            return Ok(());
        }
        let keys: Vec<&String> = update
            .keys()
            .chain(earlier.keys())
            .filter(|key| update.get(*key) != earlier.get(*key))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let names = keys.iter().map(|key| format!("`{key}`")).collect::<Vec<_>>().join(", ");
        let by = set_by.as_deref().unwrap_or("an earlier hook");
        return Err(format!("its updatedInput differs from the one {by} gave (in {names}); its rewrite is dropped"));
    }
    if let Some(check) = check {
        check(&update)
            .map_err(|violation| format!("its updatedInput is rejected: {violation}; its rewrite is dropped"))?;
    }
    *set_by = Some(hook.location.clone());
    verdict.updated_input = Some(update);
    Ok(())
}

fn strongest(a: Option<(Permission, String)>, b: Option<(Permission, String)>) -> Option<(Permission, String)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}
