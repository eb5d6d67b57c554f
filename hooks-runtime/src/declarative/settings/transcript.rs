//! A thread's history in Claude Code's transcript shape, the JSONL file a hook's
//! `transcript_path` names: a line per message, `type` (`user` or `assistant`),
//! `message.role` and `message.content` (the text of a typed user message; blocks of `text`,
//! `tool_use` and `tool_result` otherwise), with `uuid`, `parentUuid`, `sessionId`,
//! `timestamp` and `cwd` as that format writes them.

use std::path::Path;

use hooks_core::{HookMessage, Role};
use serde_json::{Value, json};

/// The transcript of `messages`, the thread `session_id`'s history in order.
pub(crate) fn render(session_id: &str, cwd: &Path, messages: &[HookMessage]) -> String {
    let mut out = String::new();
    let mut parent: Option<&str> = None;
    for message in messages {
        let Some((kind, content)) = entry(message) else { continue };
        let line = json!({
            "type": kind,
            "uuid": message.id,
            "parentUuid": parent,
            "sessionId": session_id,
            "timestamp": timestamp(message.created_at),
            "cwd": cwd.to_string_lossy(),
            "message": {"role": kind, "content": content},
        });
        // Compact, one object a line: scripts `grep '"role":"assistant"'` it.
        out.push_str(&line.to_string());
        out.push('\n');
        parent = Some(&message.id);
    }
    out
}

/// The line's `type` and `message.content` of one message; `None` for what the format's
/// transcript has no line for (system messages).
fn entry(message: &HookMessage) -> Option<(&'static str, Value)> {
    let text = message.content.clone().unwrap_or_default();
    match message.role {
        Role::User => Some(("user", Value::String(text))),
        Role::Assistant => {
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            let calls: Vec<Value> =
                message.tool_calls.as_deref().and_then(|calls| serde_json::from_str(calls).ok()).unwrap_or_default();
            for call in calls {
                let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
                let input = serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| json!({}));
                blocks.push(
                    json!({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": input}),
                );
            }
            Some(("assistant", Value::Array(blocks)))
        }
        Role::Tool => {
            let is_error = message.extra_str("tool_status") == Some("error");
            let block = json!({"type": "tool_result", "tool_use_id": message.tool_call_id, "content": text, "is_error": is_error});
            Some(("user", json!([block])))
        }
        _ => None,
    }
}

/// Milliseconds since the Unix epoch as `2025-01-31T12:00:00.000Z`.
fn timestamp(millis: i64) -> String {
    let (days, rest) = (millis.div_euclid(86_400_000), millis.rem_euclid(86_400_000));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (hours, minutes, seconds, ms) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k7_timestamps_are_iso_8601() {
        assert_eq!(timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(timestamp(1_738_324_800_123), "2025-01-31T12:00:00.123Z");
        assert_eq!(timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }
}
