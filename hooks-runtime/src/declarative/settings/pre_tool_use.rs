//! The `PreToolUse` evaluation: a tool call's matching hooks, run at once, combined into one
//! decision with the merged rewrite of the arguments and any context. Where the runtime
//! applies it is the caller's (one function, `thread::settings_hooks::govern_tool_call`).

use std::path::Path;

use serde_json::{Map, Value};

use super::SettingsEvent;
use super::SettingsHook;
use super::answer::Permission;
use super::fire::{self, Verdict};

/// What the `PreToolUse` hooks of one tool call decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolVerdict {
    /// Run the tool (also when no hook had an opinion).
    Allow,
    /// Do not run it; the reason for the model.
    Deny(String),
    /// A person must decide; the reason for them.
    Ask(String),
}

/// The combined answer: the decision, the arguments as rewritten (`None`: unchanged) and the
/// context for the model.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PreToolUseAnswer {
    pub(crate) verdict: ToolVerdict,
    pub(crate) arguments: Option<Value>,
    pub(crate) context: Option<String>,
}

/// One tool call as its `PreToolUse` hooks see it.
pub(crate) struct ToolCallInput<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) tool_name: &'a str,
    pub(crate) tool_use_id: &'a str,
    pub(crate) arguments: &'a Value,
}

/// Runs the `PreToolUse` hooks that match `call.tool_name` and combines them.
pub(crate) async fn evaluate(hooks: &[SettingsHook], call: &ToolCallInput<'_>, cwd: &Path) -> PreToolUseAnswer {
    let tool_input = if call.arguments.is_object() { call.arguments.clone() } else { Value::Object(Map::new()) };
    let input = fire::input(
        SettingsEvent::PreToolUse,
        call.session_id,
        cwd,
        vec![
            ("tool_name", Value::from(call.tool_name)),
            ("tool_input", tool_input),
            ("tool_use_id", Value::from(call.tool_use_id)),
        ],
    );
    let verdict = fire::fire(hooks, SettingsEvent::PreToolUse, Some(call.tool_name), &input, cwd).await;
    answer_of(verdict, call.arguments)
}

/// The decision of a combined verdict; a rewrite is laid over the original arguments key by key.
pub(crate) fn answer_of(verdict: Verdict, arguments: &Value) -> PreToolUseAnswer {
    let reasons = |reasons: Vec<String>, fallback: &str| {
        let reasons: Vec<String> = reasons.into_iter().filter(|r| !r.trim().is_empty()).collect();
        if reasons.is_empty() { fallback.to_owned() } else { reasons.join("; ") }
    };
    let verdict_of = match verdict.permission {
        Some((Permission::Deny, given)) => ToolVerdict::Deny(reasons(given, "denied by a PreToolUse hook")),
        Some((Permission::Ask, given)) => ToolVerdict::Ask(reasons(given, "a PreToolUse hook asks for approval")),
        Some((Permission::Allow, _)) | None => ToolVerdict::Allow,
    };
    let arguments = verdict.updated_input.map(|update| {
        let mut rewritten = match arguments {
            Value::Object(original) => original.clone(),
            _ => Map::new(),
        };
        rewritten.extend(update);
        Value::Object(rewritten)
    });
    let context = (!verdict.contexts.is_empty()).then(|| verdict.contexts.join("\n"));
    PreToolUseAnswer { verdict: verdict_of, arguments, context }
}
