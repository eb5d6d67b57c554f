//! The `PreToolUse` evaluation: a tool call's matching hooks, run at once, combined into one
//! decision with the merged rewrite of the arguments and any context. Where the runtime
//! applies it is the caller's (one function, `thread::settings_hooks::govern_tool_call`).

use std::path::Path;

use serde_json::{Map, Value};

use super::SettingsEvent;
use super::SettingsHook;
use super::answer::Permission;
use super::fire::{self, Given, RewriteCheck, Verdict};

/// What the `PreToolUse` hooks of one tool call decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolVerdict {
    /// Run the tool (also when no hook had an opinion).
    Allow,
    /// Do not run it: the first denying hook's id, and the reasons of all that denied, for
    /// the model.
    Deny {
        /// [`SettingsHook::id`] of the first hook that denied.
        hook: String,
        /// Why, every denying hook's reason joined.
        reason: String,
    },
    /// A person must decide: each asking hook's id and reason, file order.
    Ask(Vec<Given>),
}

/// The combined answer: the decision, the arguments as rewritten (`None`: unchanged), the
/// context for the model, and for the person the hooks that stop the turn (`continue: false`)
/// and their `systemMessage`s.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreToolUseAnswer {
    pub(crate) verdict: ToolVerdict,
    pub(crate) arguments: Option<Value>,
    pub(crate) context: Option<String>,
    pub(crate) stops: Vec<Given>,
    pub(crate) messages: Vec<Given>,
}

/// One tool call as its `PreToolUse` hooks see it.
pub(crate) struct ToolCallInput<'a> {
    /// The runtime's state and the thread, for the hooks that run `once` per thread.
    pub(crate) once: Option<(&'a super::SettingsState, &'a str)>,
    pub(crate) session_id: &'a str,
    pub(crate) tool_name: &'a str,
    pub(crate) tool_use_id: &'a str,
    pub(crate) arguments: &'a Value,
    /// The thread's transcript file, when one was written for these hooks.
    pub(crate) transcript_path: Option<&'a str>,
}

/// Runs the `PreToolUse` hooks that match `call.tool_name` and combines them. `check` judges
/// the complete arguments a rewrite would leave (the tool's schema, G5): a rewrite it rejects is
/// its hook's failure.
pub(crate) async fn evaluate(
    hooks: &[SettingsHook],
    call: &ToolCallInput<'_>,
    cwd: &Path,
    check: &(dyn Fn(&Value) -> Result<(), String> + Sync),
) -> PreToolUseAnswer {
    let tool_input = if call.arguments.is_object() { call.arguments.clone() } else { Value::Object(Map::new()) };
    let input = fire::input(
        SettingsEvent::PreToolUse,
        call.session_id,
        cwd,
        vec![
            ("tool_name", Value::from(call.tool_name)),
            ("tool_input", tool_input),
            ("tool_use_id", Value::from(call.tool_use_id)),
        ]
        .into_iter()
        .chain(call.transcript_path.map(|path| ("transcript_path", Value::from(path))))
        .collect(),
    );
    let rewrite_check = |update: &Map<String, Value>| {
        let rewritten = Value::Object(update.clone());
        // As in the gate, only a change is checked: arguments the model wrote that the schema
        // rejects are not a hook's failure.
        if rewritten == *call.arguments { Ok(()) } else { check(&rewritten) }
    };
    let rewrite_check: RewriteCheck<'_> = &rewrite_check;
    let verdict = fire::fire(
        hooks,
        call.once,
        SettingsEvent::PreToolUse,
        Some(call.tool_name),
        Some(call.arguments),
        &input,
        cwd,
        Some(rewrite_check),
    )
    .await;
    answer_of(verdict)
}

/// The decision of a combined verdict; a rewrite replaces the arguments whole.
pub(crate) fn answer_of(verdict: Verdict) -> PreToolUseAnswer {
    let context = verdict.context();
    let verdict_of = match verdict.permission {
        Some((Permission::Deny, given)) => {
            let hook = given.first().map(|given| given.hook.clone()).unwrap_or_default();
            let reasons: Vec<String> =
                given.into_iter().map(|given| given.reason).filter(|reason| !reason.trim().is_empty()).collect();
            let reason = if reasons.is_empty() { "denied by a PreToolUse hook".to_owned() } else { reasons.join("; ") };
            ToolVerdict::Deny { hook, reason }
        }
        Some((Permission::Ask, given)) => ToolVerdict::Ask(
            given
                .into_iter()
                .map(|mut given| {
                    if given.reason.trim().is_empty() {
                        given.reason = "a PreToolUse hook asks for approval".to_owned();
                    }
                    given
                })
                .collect(),
        ),
        Some((Permission::Allow | Permission::Defer, _)) | None => ToolVerdict::Allow,
    };
    let arguments = verdict.updated_input.map(Value::Object);
    PreToolUseAnswer { verdict: verdict_of, arguments, context, stops: verdict.stops, messages: verdict.messages }
}
