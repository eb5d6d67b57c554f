//! What one hook run says, read with the format's protocol: exit 2 blocks with stderr as the
//! reason; exit 0 applies the JSON on stdout (or, for the events that take it, plain text as
//! context); anything else is a failure, which fails open or, when marked, closed.

use serde_json::{Map, Value};

use super::SettingsEvent;
use super::runner::{HookRun, RunEnd};

/// A permission decision of a `PreToolUse` hook. Ordered by strength: the strongest wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Permission {
    /// `defer`: no decision; never kept in an answer.
    Defer,
    Allow,
    Ask,
    Deny,
}

/// One hook's answer, in this runtime's terms.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Answer {
    /// `PreToolUse`: its decision and reason.
    pub(crate) permission: Option<(Permission, String)>,
    /// The other deciding events: `decision: "block"` (or exit 2) and its reason.
    pub(crate) block: Option<String>,
    /// `continue: false`, with its `stopReason`.
    pub(crate) stop: Option<String>,
    /// `PreToolUse`: `updatedInput`.
    pub(crate) updated_input: Option<Map<String, Value>>,
    /// `additionalContext`, or plain stdout where the event takes it as context.
    pub(crate) context: Option<String>,
    /// Why the hook failed, when it did (already turned into a denial if it fails closed).
    pub(crate) failure: Option<String>,
    /// The first lines of what a failed command wrote to stderr: for the DEBUG log only, since
    /// a hook's stderr may quote the tool input it was given (H1).
    pub(crate) failure_stderr: Option<String>,
    /// `systemMessage`: for the person, never the model.
    pub(crate) system_message: Option<String>,
    /// `suppressOutput: true`: its stdout is kept out of the logs.
    pub(crate) suppress_output: bool,
}

/// Reads `run` as the answer of a hook of `event`.
pub(crate) fn read(event: SettingsEvent, run: &HookRun, fail_closed: bool) -> Answer {
    let answer = match &run.end {
        RunEnd::Exited(0) => from_stdout(event, &run.stdout),
        RunEnd::Exited(2) => {
            Ok(blocked(event, reason_or(&run.stderr, "blocked by a hook (exit code 2, no reason given)")))
        }
        RunEnd::Exited(code) => {
            let mut answer = failed(event, format!("exited with code {code}"), fail_closed);
            answer.failure_stderr = stderr_excerpt(&run.stderr);
            return answer;
        }
        RunEnd::Killed(how) => Err(format!("ended by {how}")),
        RunEnd::TimedOut(after) => Err(format!("did not finish within {after:?} and was killed")),
        RunEnd::NotRun(why) => Err(why.clone()),
    };
    match answer {
        Ok(answer) => answer,
        Err(failure) => failed(event, failure, fail_closed),
    }
}

/// A failure: logged by the caller; a denial (or a block) when the hook fails closed.
pub(crate) fn failed(event: SettingsEvent, failure: String, fail_closed: bool) -> Answer {
    let mut answer = if fail_closed {
        blocked(event, format!("a hook that fails closed failed: {failure}"))
    } else {
        Answer::default()
    };
    answer.failure = Some(failure);
    answer
}

fn blocked(event: SettingsEvent, reason: String) -> Answer {
    match event {
        SettingsEvent::PreToolUse | SettingsEvent::PermissionRequest => {
            Answer { permission: Some((Permission::Deny, reason)), ..Answer::default() }
        }
        _ => Answer { block: Some(reason), ..Answer::default() },
    }
}

fn reason_or(text: &str, fallback: &str) -> String {
    let text = text.trim();
    if text.is_empty() { fallback.to_owned() } else { text.to_owned() }
}

/// The first lines of stderr for a failure's DEBUG log line; `None` when it is empty.
fn stderr_excerpt(stderr: &str) -> Option<String> {
    const LINES: usize = 20;
    let stderr = stderr.trim();
    if stderr.is_empty() {
        return None;
    }
    let mut excerpt: Vec<&str> = stderr.lines().take(LINES).collect();
    if stderr.lines().count() > LINES {
        excerpt.push("...");
    }
    Some(excerpt.join("\n"))
}

fn from_stdout(event: SettingsEvent, stdout: &str) -> Result<Answer, String> {
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        // Plain text is context for the events whose stdout the format gives the model;
        // elsewhere it is only for the transcript, which this runtime does not keep.
        let takes_text = matches!(event, SettingsEvent::UserPromptSubmit | SettingsEvent::SessionStart);
        let context = (takes_text && !trimmed.is_empty()).then(|| trimmed.to_owned());
        return Ok(Answer { context, ..Answer::default() });
    }
    let output: Map<String, Value> =
        serde_json::from_str(trimmed).map_err(|error| format!("printed JSON that does not parse: {error}"))?;
    let mut answer = Answer::default();
    let text = |key: &str, map: &Map<String, Value>| -> Result<Option<String>, String> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(format!("printed `{key}` as {other}, not a string")),
        }
    };
    answer.system_message = text("systemMessage", &output)?.filter(|message| !message.trim().is_empty());
    match output.get("suppressOutput") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(suppress)) => answer.suppress_output = *suppress,
        Some(other) => return Err(format!("printed `suppressOutput` as {other}, not a boolean")),
    }
    match output.get("continue") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => {}
        Some(Value::Bool(false)) => {
            answer.stop = Some(text("stopReason", &output)?.unwrap_or_else(|| "a hook stopped the run".to_owned()));
        }
        Some(other) => return Err(format!("printed `continue` as {other}, not a boolean")),
    }
    let reason = text("reason", &output)?;
    match text("decision", &output)?.as_deref() {
        None => {}
        Some("block") => {
            let reason = reason.unwrap_or_else(|| "blocked by a hook (no reason given)".to_owned());
            answer = merge_block(answer, event, reason);
        }
        // The older spelling of a `PreToolUse` allow.
        Some("approve") if event == SettingsEvent::PreToolUse => {
            answer.permission = Some((Permission::Allow, reason.unwrap_or_default()));
        }
        Some(other) => return Err(format!("printed the unknown decision `{other}`; expected `block`")),
    }
    if let Some(specific) = output.get("hookSpecificOutput") {
        let Value::Object(specific) = specific else {
            return Err(format!("printed `hookSpecificOutput` as {specific}, not an object"));
        };
        if let Some(decision) = text("permissionDecision", specific)? {
            let permission = match decision.as_str() {
                "allow" => Permission::Allow,
                "ask" => Permission::Ask,
                "deny" => Permission::Deny,
                // The hook passes the decision on to whatever decides next, as if it had not
                // answered (its other fields still count).
                "defer" => Permission::Defer,
                other => {
                    return Err(format!(
                        "printed the unknown permissionDecision `{other}`; expected allow, deny, ask or defer"
                    ));
                }
            };
            let reason = text("permissionDecisionReason", specific)?.unwrap_or_default();
            // With a `decision: "block"` too, the stronger of the two stands.
            if permission != Permission::Defer
                && answer.permission.as_ref().is_none_or(|(current, _)| permission > *current)
            {
                answer.permission = Some((permission, reason));
            }
        }
        // PermissionRequest: `{"decision": {"behavior": "allow" | "deny", "updatedInput", "message"}}`.
        match specific.get("decision") {
            None | Some(Value::Null) => {}
            Some(Value::Object(decision)) if event == SettingsEvent::PermissionRequest => {
                let message = text("message", decision)?.unwrap_or_default();
                match text("behavior", decision)?.as_deref() {
                    Some("allow") => answer.permission = Some((Permission::Allow, message)),
                    Some("deny") => answer.permission = Some((Permission::Deny, message)),
                    other => {
                        return Err(format!("printed the decision behavior {other:?}; expected `allow` or `deny`"));
                    }
                }
                match decision.get("updatedInput") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(input)) => answer.updated_input = Some(input.clone()),
                    Some(other) => return Err(format!("printed `updatedInput` as {other}, not an object")),
                }
            }
            Some(other) => return Err(format!("printed `decision` as {other}, not an object of this event")),
        }
        match specific.get("updatedInput") {
            None | Some(Value::Null) => {}
            Some(Value::Object(input)) => answer.updated_input = Some(input.clone()),
            Some(other) => return Err(format!("printed `updatedInput` as {other}, not an object")),
        }
        answer.context = text("additionalContext", specific)?;
    }
    if event == SettingsEvent::PreToolUse
        && let Some(stop) = answer.stop.clone()
        && answer.permission.as_ref().is_none_or(|(p, _)| *p != Permission::Deny)
    {
        // A run the hook wants stopped does not run this tool either. The stop reason is the
        // person's; the model reads only that the turn stopped.
        let _ = stop;
        answer.permission =
            Some((Permission::Deny, "a PreToolUse hook stopped the turn (`continue: false`)".to_owned()));
    }
    Ok(answer)
}

fn merge_block(mut answer: Answer, event: SettingsEvent, reason: String) -> Answer {
    let blocked = blocked(event, reason);
    answer.permission = blocked.permission.or(answer.permission);
    answer.block = blocked.block.or(answer.block);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32, stdout: &str, stderr: &str) -> HookRun {
        HookRun { end: RunEnd::Exited(code), stdout: stdout.to_owned(), stderr: stderr.to_owned() }
    }

    #[test]
    fn k4_exit_2_blocks_with_stderr_as_the_reason() {
        let answer = read(SettingsEvent::PreToolUse, &exited(2, "", "no rm -rf\n"), false);
        assert_eq!(answer.permission, Some((Permission::Deny, "no rm -rf".to_owned())));
        let answer = read(SettingsEvent::UserPromptSubmit, &exited(2, "", "no secrets"), false);
        assert_eq!(answer.block.as_deref(), Some("no secrets"));
    }

    #[test]
    fn k4_exit_0_json_fields_are_applied() {
        let stdout = r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
            "permissionDecisionReason": "force push", "updatedInput": {"command": "ls"}, "additionalContext": "note"},
            "systemMessage": "shown"}"#;
        let answer = read(SettingsEvent::PreToolUse, &exited(0, stdout, ""), false);
        assert_eq!(answer.permission, Some((Permission::Ask, "force push".to_owned())));
        assert_eq!(answer.updated_input.unwrap()["command"], "ls");
        assert_eq!(answer.context.as_deref(), Some("note"));
        assert_eq!(answer.failure, None);

        let answer =
            read(SettingsEvent::Stop, &exited(0, r#"{"decision": "block", "reason": "run the tests"}"#, ""), false);
        assert_eq!(answer.block.as_deref(), Some("run the tests"));
        let answer =
            read(SettingsEvent::PostToolUse, &exited(0, r#"{"continue": false, "stopReason": "enough"}"#, ""), false);
        assert_eq!(answer.stop.as_deref(), Some("enough"));
        let answer = read(SettingsEvent::PreToolUse, &exited(0, r#"{"continue": false}"#, ""), false);
        assert!(matches!(answer.permission, Some((Permission::Deny, _))));
    }

    #[test]
    fn k4_plain_stdout_is_context_only_where_the_format_says_so() {
        let answer = read(SettingsEvent::UserPromptSubmit, &exited(0, "today is Tuesday\n", ""), false);
        assert_eq!(answer.context.as_deref(), Some("today is Tuesday"));
        let answer = read(SettingsEvent::PreToolUse, &exited(0, "checked\n", ""), false);
        assert_eq!(answer, Answer::default());
    }

    #[test]
    fn k4_other_exits_bad_json_and_timeouts_fail_open_unless_marked() {
        let runs = [
            exited(1, "", "boom"),
            exited(0, "{not json", ""),
            exited(0, r#"{"hookSpecificOutput": {"permissionDecision": "maybe"}}"#, ""),
            HookRun {
                end: RunEnd::TimedOut(std::time::Duration::from_secs(1)),
                stdout: String::new(),
                stderr: String::new(),
            },
        ];
        for run in &runs {
            let open = read(SettingsEvent::PreToolUse, run, false);
            assert!(open.failure.is_some() && open.permission.is_none(), "{run:?}");
            let closed = read(SettingsEvent::PreToolUse, run, true);
            assert!(matches!(closed.permission, Some((Permission::Deny, _))), "{run:?}");
        }
    }
}
