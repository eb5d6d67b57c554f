//! Request context assembly (R1-R8): system message, `after_system_message`, one stable
//! snapshot, `filter_messages` once, provider transformation, `prefilter_llm_history`.
//! Nothing here writes history: hooks that want to persist go through `inject_message`, which
//! never restarts an assembly (R6).

use hooks_core::{HookError, HookKind, HookMessage, LlmMessage, PromptDef, Role, ThreadState};

use super::pipeline::Pipeline;
use crate::dispatch;

/// The provider request history, or the blocking error of a `prefilter_llm_history` hook (R7).
pub(crate) async fn assemble(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    prompt: &PromptDef,
) -> Result<Result<Vec<LlmMessage>, HookError>, crate::store::StoreError> {
    // R1: after interpolation, before the snapshot.
    let rendered = interpolate(prompt.prompt, state);
    let system =
        dispatch::after_system_message(&pipeline.dispatch(HookKind::AfterSystemMessage), state, rendered).await;
    // R2, R3: messages injected above are persisted, so the snapshot taken now includes them,
    // silent ones too.
    let snapshot = pipeline.shared.runtime.store.messages(&pipeline.shared.id).await?;
    // R3, R4: exactly once, on the snapshot; its result is confined to this request.
    let filtered = dispatch::filter_messages(&pipeline.dispatch(HookKind::FilterMessages), state, snapshot).await;
    let provider = to_provider_messages(system, &filtered, prompt);
    // R5, R7.
    Ok(dispatch::prefilter_llm_history(&pipeline.dispatch(HookKind::PrefilterLlmHistory), state, provider).await)
}

/// Replaces `{{name}}` with the thread argument `name` (strings as they are, other values as
/// JSON); an unknown name stays as written.
pub(crate) fn interpolate(template: &str, state: &ThreadState) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                match state.arguments.get(name) {
                    Some(serde_json::Value::String(text)) => out.push_str(text),
                    Some(value) => out.push_str(&value.to_string()),
                    None => out.push_str(&rest[start..start + 2 + end + 2]),
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Provider-message transformation: the system message, then the filtered history. A failed
/// model step's row is not a message the provider can take and is left out; with
/// `include_chat: false` only the exchange since the last user message is sent, and with
/// `include_past_tools: false` tool exchanges before that message are left out.
pub(crate) fn to_provider_messages(system: String, history: &[HookMessage], prompt: &PromptDef) -> Vec<LlmMessage> {
    let last_user = history.iter().rposition(|message| message.role == Role::User).unwrap_or(0);
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(LlmMessage::new("system", system));
    for (index, message) in history.iter().enumerate() {
        if message.extra_str("status") == Some("failed") {
            continue;
        }
        let before_turn = index < last_user;
        if before_turn && !prompt.include_chat {
            continue;
        }
        let is_tool_exchange = message.role == Role::Tool || message.tool_calls.is_some();
        if before_turn && is_tool_exchange && !prompt.include_past_tools {
            continue;
        }
        messages.push(LlmMessage {
            role: message.role.as_str().to_owned(),
            content: message.content.clone(),
            tool_calls: message
                .tool_calls
                .as_ref()
                .map(|calls| serde_json::from_str(calls).unwrap_or_else(|_| serde_json::Value::String(calls.clone()))),
            tool_call_id: message.tool_call_id.clone(),
            name: message.name.clone(),
        });
    }
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_replaces_known_arguments_and_keeps_unknown_ones() {
        let mut state = ThreadState::detached("t", "a");
        state.arguments.insert("owner".into(), "octo".into());
        state.arguments.insert("number".into(), 7.into());
        assert_eq!(interpolate("{{owner}}/#{{ number }} {{missing}} {{", &state), "octo/#7 {{missing}} {{");
    }
}
