//! Cutting a history for `filter_messages` without splitting a tool exchange.

use std::collections::HashMap;

use hooks_core::{HookMessage, Role};

/// Keeps at most the last `max` messages, cutting only where no tool exchange continues.
///
/// A tool exchange is an assistant message with tool calls, the tool results that answer them,
/// and any message created while the calls ran. A cut between a call and its result would leave
/// the provider a call without its result (or the reverse), which it rejects, so the runtime
/// would not send either (and warns). This moves the cut forward to the first place after
/// `messages.len() - max` that no exchange crosses: it keeps `max` messages or fewer, never more.
/// Messages are kept in order and untouched.
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(filter_messages, id = "keep_last_20_messages")]
/// fn keep_last_20(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
///     keep_last_messages(messages, 20);
/// }
///
/// let call = r#"[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]"#;
/// let mut messages = vec![
///     HookMessage::new("msg_1", Role::User, "Where is my order?", 1),
///     HookMessage::new("msg_2", Role::Assistant, "", 2).with_tool_calls(call),
///     HookMessage::new("msg_3", Role::Tool, "shipped", 3).with_tool_call_id("call_1"),
///     HookMessage::new("msg_4", Role::Assistant, "It shipped today.", 4),
/// ];
/// // The last 3 start at the call: its exchange is whole, and all 3 stay.
/// let mut three = messages.clone();
/// keep_last_messages(&mut three, 3);
/// assert_eq!(three.len(), 3);
/// // The last 2 would start at the tool result, without its call: the cut moves past the exchange.
/// keep_last_messages(&mut messages, 2);
/// assert_eq!(messages.len(), 1);
/// assert_eq!(messages[0].content.as_deref(), Some("It shipped today."));
/// ```
pub fn keep_last_messages(messages: &mut Vec<HookMessage>, max: usize) {
    let earliest = messages.len().saturating_sub(max);
    if earliest == 0 {
        return;
    }
    // reach[c]: the last result answering a call of message c; a cut in (c, reach[c]] splits it.
    let mut reach: Vec<usize> = (0..messages.len()).collect();
    let mut calls: HashMap<String, usize> = HashMap::new();
    for (at, message) in messages.iter().enumerate() {
        match message.role {
            Role::Assistant => calls.extend(call_ids(message).map(|id| (id, at))),
            Role::Tool => {
                if let Some(&call) = message.tool_call_id.as_ref().and_then(|id| calls.get(id)) {
                    reach[call] = reach[call].max(at);
                }
            }
            _ => {}
        }
    }
    let mut crossing = 0;
    let mut cut = messages.len();
    for at in 1..messages.len() {
        crossing = crossing.max(reach[at - 1]);
        if at >= earliest && crossing < at {
            cut = at;
            break;
        }
    }
    messages.drain(..cut);
}

/// The ids of an assistant message's tool calls (a JSON array in a string, the spec's shape).
fn call_ids(message: &HookMessage) -> impl Iterator<Item = String> {
    let calls = message.tool_calls.as_deref().and_then(|calls| serde_json::from_str::<serde_json::Value>(calls).ok());
    let calls = match calls {
        Some(serde_json::Value::Array(calls)) => calls,
        _ => Vec::new(),
    };
    calls.into_iter().filter_map(|call| call.get("id")?.as_str().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(role: Role, content: &str) -> HookMessage {
        HookMessage::new(content, role, content, 0)
    }

    fn calls(ids: &[&str]) -> HookMessage {
        let calls: Vec<_> = ids.iter().map(|id| serde_json::json!({"id": id, "type": "function"})).collect();
        HookMessage::new(ids.join(","), Role::Assistant, "", 0)
            .with_tool_calls(serde_json::Value::from(calls).to_string())
    }

    fn result(id: &str) -> HookMessage {
        HookMessage::new(id, Role::Tool, id, 0).with_tool_call_id(id)
    }

    fn contents(messages: &[HookMessage]) -> Vec<&str> {
        messages.iter().map(|message| message.content.as_deref().unwrap_or("")).collect()
    }

    #[test]
    fn a_cut_between_exchanges_keeps_exactly_max() {
        let mut messages = vec![
            text(Role::User, "a"),
            calls(&["c1"]),
            result("c1"),
            text(Role::Assistant, "b"),
            text(Role::User, "c"),
        ];
        keep_last_messages(&mut messages, 2);
        assert_eq!(contents(&messages), ["b", "c"]);
    }

    #[test]
    fn a_cut_inside_an_exchange_moves_past_its_last_result() {
        // Two calls answered in two results, with an injected message between them.
        let mut messages = vec![
            text(Role::User, "a"),
            calls(&["c1", "c2"]),
            result("c1"),
            text(Role::System, "injected"),
            result("c2"),
            text(Role::Assistant, "b"),
        ];
        keep_last_messages(&mut messages, 4);
        assert_eq!(contents(&messages), ["b"]);
        let mut whole = vec![text(Role::User, "a"), calls(&["c1", "c2"]), result("c1"), result("c2")];
        keep_last_messages(&mut whole, 2);
        assert!(whole.is_empty(), "an exchange longer than max goes whole: {:?}", contents(&whole));
    }

    #[test]
    fn a_short_history_is_untouched() {
        let mut messages = vec![calls(&["c1"]), result("c1")];
        keep_last_messages(&mut messages, 2);
        assert_eq!(messages.len(), 2);
        keep_last_messages(&mut messages, 0);
        assert!(messages.is_empty());
    }
}
