//! Request context assembly (R1-R8): system message, `after_system_message`, one stable
//! snapshot, `filter_messages` once, provider transformation, `prefilter_llm_history`.
//! Nothing here writes history: hooks that want to persist go through `inject_message`, which
//! never restarts an assembly (R6).

use hooks_core::{HookError, HookKind, HookMessage, LlmMessage, PromptDef, Role, ThreadState};

use super::pipeline::Pipeline;
use super::stored_calls;
use crate::dispatch;
use crate::shared::history_buffers::copy_into;

/// The provider request history, or the blocking error of a `prefilter_llm_history` hook (R7).
pub(crate) async fn assemble(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    prompt: &PromptDef,
) -> Result<Result<Vec<LlmMessage>, HookError>, crate::store::StoreError> {
    // R1: after interpolation, before the snapshot.
    let mut missing = Vec::new();
    let mut system = render(prompt.prompt, &state.arguments, |name| missing.push(name));
    if !missing.is_empty() {
        // `create_thread` refuses a thread whose agent's prompts lack an argument; this is a
        // subagent (created with no arguments) or a handoff to an agent whose prompt needs one.
        let missing = missing.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
        tracing::warn!(
            target: "hooks_runtime::thread",
            "prompt `{}` is sent with {missing} as written: the thread has no argument of that name",
            prompt.name
        );
    }
    if let Some(chain) = pipeline.chain(HookKind::AfterSystemMessage) {
        dispatch::await_point!(dispatch::after_system_message(&chain, state, &mut system));
    }
    // R2, R3: messages injected above are persisted, so the snapshot taken now includes them,
    // silent ones too.
    let filter = pipeline.chain(HookKind::FilterMessages);
    let mut repairs = Repairs::default();
    // The calls of the step just stored, as a value already: not read back from their text.
    let mut kept = pipeline.shared.last_calls.take();
    let mut provider = match &filter {
        // Nothing needs messages of its own: the request is built from the stored messages as
        // the store lends them, each copied once into the provider's shape.
        None => {
            pipeline
                .shared
                .journal
                .read_messages(|history| {
                    let (plain, capacity) = (is_plain(history), history.len() + 1);
                    let sendable =
                        history.iter().filter(|message| is_sendable(message)).map(|message| to_llm(message, &mut kept));
                    provider_messages(system, plain, capacity, sendable, prompt, &mut repairs)
                })
                .await?
        }
        // R3, R4: exactly once, on the snapshot; its result is confined to this request.
        Some(chain) => {
            let buffers = &pipeline.shared.runtime.history_buffers;
            let mut history = buffers.take();
            pipeline.shared.journal.read_messages(|stored| copy_into(&mut history, stored)).await?;
            // What the chain changed, for whoever traces hooks (an inspector): the message
            // counts before and after it, on a span of its own, built only when someone listens.
            let counted = dispatch::spans_wanted().then(|| {
                tracing::info_span!(target: dispatch::TARGET, "filter_messages_chain", messages_before = count(history.len()), messages_after = tracing::field::Empty)
            });
            dispatch::await_point!(dispatch::filter_messages(chain, state, &mut history));
            if let Some(span) = counted {
                span.record("messages_after", count(history.len()));
            }
            let (plain, capacity) = (is_plain(&history), history.len() + 1);
            // Copied out, so that the buffer keeps its strings for the next assembly.
            let sendable =
                history.iter().filter(|message| is_sendable(message)).map(|message| to_llm(message, &mut kept));
            let provider = provider_messages(system, plain, capacity, sendable, prompt, &mut repairs);
            buffers.give_back(history);
            provider
        }
    };
    if !repairs.is_empty() {
        match &filter {
            Some(chain) => warn_split_exchanges(pipeline, chain.chain, repairs).await?,
            // Expected after a run that stopped between a call and its result (a handoff, a
            // stop after repeated tool errors, a crash): the unanswered calls are not sent.
            None => tracing::debug!(target: "hooks_runtime::thread", "stored history sent without {repairs}"),
        }
    }
    // R5, R7, then R9 on whatever the prefilter returned. Without a prefilter the history is
    // the provider transformation's, provider-valid as it is.
    if let Some(chain) = pipeline.chain(HookKind::PrefilterLlmHistory) {
        let prefiltered = dispatch::await_point!(dispatch::prefilter_llm_history(&chain, state, &mut provider));
        if let Err(blocked) = prefiltered {
            return Ok(Err(blocked));
        }
        provider = repair_prefiltered(provider);
    }
    Ok(Ok(provider))
}

/// A message count as a signed integer, as OpenTelemetry's integer attributes are (an exporter
/// writes a `usize` field as text).
fn count(messages: usize) -> i64 {
    i64::try_from(messages).unwrap_or(i64::MAX)
}

/// Replaces `{{name}}` with the thread argument `name` (strings as they are, other values as
/// JSON); an unknown name stays as written. [`assemble`] renders through [`render`] directly, to
/// warn about unknown names; this is the benches' entry point.
#[cfg(any(test, feature = "__bench"))]
pub(crate) fn interpolate(template: &str, state: &ThreadState) -> String {
    render(template, &state.arguments, |_| {})
}

/// [`interpolate`], calling `missing` with each placeholder name the arguments lack. Substituted
/// text is not scanned again, so an argument whose value is `{{name}}` sends that text literally.
fn render<'t>(
    template: &'t str,
    arguments: &serde_json::Map<String, serde_json::Value>,
    mut missing: impl FnMut(&'t str),
) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = find_pair(rest, b'{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match find_pair(after, b'}') {
            Some(end) => {
                let name = after[..end].trim();
                match arguments.get(name) {
                    Some(serde_json::Value::String(text)) => out.push_str(text),
                    Some(value) => out.push_str(&value.to_string()),
                    None => {
                        missing(name);
                        out.push_str(&rest[start..start + 2 + end + 2]);
                    }
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

/// Where `text` first has `byte` twice in a row (`{{`, `}}`): a byte scan, where `str::find`
/// sets up a substring searcher for every prompt of every step.
fn find_pair(text: &str, byte: u8) -> Option<usize> {
    text.as_bytes().windows(2).position(|pair| pair[0] == byte && pair[1] == byte)
}

/// The first `{{name}}` placeholder of `template` that `arguments` has no value for.
pub(crate) fn first_missing_argument<'t>(
    template: &'t str,
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Option<&'t str> {
    let mut first = None;
    render(template, arguments, |name| {
        first.get_or_insert(name);
    });
    first
}

/// Provider-message transformation: the system message, then the filtered history as a
/// provider-valid sequence (R9). A failed model step's row is not a message the provider can
/// take and is left out.
///
/// History is read in units: a plain message, or a tool exchange, which is an assistant message
/// with tool calls, exactly one result per call right after it, then the messages created while
/// those calls ran (a hook's `inject_message`, a generated-file notice), moved after the results.
/// The current turn starts at the last user message that is not part of an exchange; with
/// `include_chat: false` only the units from there on are sent, and with
/// `include_past_tools: false` the exchanges before it lose their call and results together,
/// while the messages created during them stay.
#[cfg(any(test, feature = "__bench"))]
pub(crate) fn to_provider_messages(system: String, history: &[HookMessage], prompt: &PromptDef) -> Vec<LlmMessage> {
    let (plain, capacity) = (is_plain(history), history.len() + 1);
    let sendable = history.iter().filter(|message| is_sendable(message)).map(|message| to_llm(message, &mut None));
    provider_messages(system, plain, capacity, sendable, prompt, &mut Repairs::default())
}

/// A history without tool exchanges: a unit per message, no grouping needed.
fn is_plain(history: &[HookMessage]) -> bool {
    history.iter().all(|message| message.tool_calls.is_none() && message.role != Role::Tool)
}

/// Whether a stored message is one the provider can take: a failed model step's row is not.
fn is_sendable(message: &HookMessage) -> bool {
    message.extra_str("status") != Some("failed")
}

/// [`to_provider_messages`] from the `sendable` messages of a history (`capacity - 1` messages
/// at most; `plain` when it has no tool exchanges), recording in `repairs` what it left out.
fn provider_messages(
    system: String,
    plain: bool,
    capacity: usize,
    sendable: impl Iterator<Item = LlmMessage>,
    prompt: &PromptDef,
    repairs: &mut Repairs,
) -> Vec<LlmMessage> {
    let mut messages = Vec::with_capacity(capacity);
    messages.push(LlmMessage::new("system", system));
    if plain {
        messages.extend(sendable);
        if !prompt.include_chat {
            let boundary = messages[1..].iter().rposition(|message| message.role == Role::User.as_str()).unwrap_or(0);
            messages.drain(1..1 + boundary);
        }
        return messages;
    }
    let units = group(sendable, capacity, repairs);
    let boundary = units.iter().rposition(Unit::is_user_message).unwrap_or(0);
    for (index, unit) in units.into_iter().enumerate() {
        let before_turn = index < boundary;
        if before_turn && !prompt.include_chat {
            continue;
        }
        let keep_pair = !before_turn || prompt.include_past_tools;
        unit.flatten_into(&mut messages, keep_pair);
    }
    messages
}

/// A `filter_messages` chain returned a history that splits tool exchanges (a "keep the last N"
/// cut between a call and its result): the provider would reject it, so the split calls and
/// results are not sent, and this warns, once per assembly, with the chain's hook ids and the
/// call ids. Calls the stored history itself leaves unanswered (a run that stopped between a call
/// and its result) are expected and not the chain's doing; telling them apart re-reads the
/// history, which happens only on this path. [`keep_last_messages`](crate::keep_last_messages)
/// is a cut that keeps exchanges whole.
async fn warn_split_exchanges(
    pipeline: &Pipeline<'_>,
    chain: &[hooks_core::__private::ResolvedHook],
    repairs: Repairs,
) -> Result<(), crate::store::StoreError> {
    let mut already = Repairs::default();
    pipeline
        .shared
        .journal
        .read_messages(|stored| {
            let sendable =
                stored.iter().filter(|message| is_sendable(message)).map(|message| to_llm(message, &mut None));
            group(sendable, stored.len(), &mut already);
        })
        .await?;
    let dropped: Vec<String> = [repairs.unanswered, repairs.orphaned, repairs.duplicated]
        .into_iter()
        .flatten()
        .filter(|id| ![&already.unanswered, &already.orphaned, &already.duplicated].iter().any(|ids| ids.contains(id)))
        .map(|id| format!("`{id}`"))
        .collect();
    if dropped.is_empty() {
        tracing::debug!(target: "hooks_runtime::thread", "stored history sent without {already}");
        return Ok(());
    }
    let hooks = chain.iter().map(|entry| format!("`{}`", entry.hook.id)).collect::<Vec<_>>().join(", ");
    tracing::warn!(
        target: "hooks_runtime::hook",
        "filter_messages hooks {hooks} split tool exchanges; the calls and results of {} were not sent (a provider \
         rejects a call without its result); cut history between exchanges, as hooks_runtime::keep_last_messages does",
        dropped.join(", ")
    );
    Ok(())
}

/// The `prefilter_llm_history` output made provider-valid (R9).
///
/// A prefilter may return any sequence; one that splits a tool exchange (a "keep the last N"
/// cut between a call and its results, say) is **repaired, with a warning**, rather than failing
/// the step: tool results whose call is not right before them are dropped, calls with no result
/// are removed from their assistant message (the message itself goes when nothing else is left),
/// and other messages between a call and its results move after the results. The warning names
/// the call ids and counts, never contents. Repair was chosen over failing because the common
/// prefilters (truncation, summarisation) cut history at arbitrary points and should not stop
/// a conversation for it.
pub(crate) fn repair_prefiltered(messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    let mut repairs = Repairs::default();
    let capacity = messages.len();
    let units = group(messages, capacity, &mut repairs);
    if !repairs.is_empty() {
        tracing::warn!(
            target: "hooks_runtime::thread",
            "prefilter_llm_history returned a history that providers reject; repaired by removing {repairs}"
        );
    }
    let mut repaired = Vec::with_capacity(units.len());
    for unit in units {
        unit.flatten_into(&mut repaired, true);
    }
    repaired
}

/// A lent stored message copied into the provider's shape: its text, call id and name copied,
/// its tool calls `kept`'s value when they are the calls kept ([`stored_calls::value_of`]),
/// else read; its id and extra fields left.
fn to_llm(message: &HookMessage, kept: &mut Option<(String, serde_json::Value)>) -> LlmMessage {
    let mut llm = LlmMessage::new(message.role.as_str(), String::new());
    llm.content = message.content.clone();
    llm.tool_calls = message.tool_calls.as_deref().map(|calls| stored_calls::value_of(calls, kept));
    llm.tool_call_id = message.tool_call_id.clone();
    llm.name = message.name.clone();
    llm
}

/// A piece of history that a provider takes whole.
enum Unit {
    Message(LlmMessage),
    Exchange {
        /// The assistant message, its tool calls narrowed to the answered ones.
        call: LlmMessage,
        /// One result per call, in the order of the calls.
        results: Vec<LlmMessage>,
        /// Messages stored while the calls ran, in their order.
        during: Vec<LlmMessage>,
    },
}

impl Unit {
    fn is_user_message(&self) -> bool {
        matches!(self, Unit::Message(message) if message.role == Role::User.as_str())
    }

    fn flatten_into(self, out: &mut Vec<LlmMessage>, keep_pair: bool) {
        match self {
            Unit::Message(message) => out.push(message),
            Unit::Exchange { call, results, during } => {
                if keep_pair {
                    out.push(call);
                    out.extend(results);
                }
                out.extend(during);
            }
        }
    }
}

/// What [`group`] left out, by call id: never contents.
#[derive(Default)]
struct Repairs {
    unanswered: Vec<String>,
    orphaned: Vec<String>,
    duplicated: Vec<String>,
    malformed: usize,
}

impl Repairs {
    fn is_empty(&self) -> bool {
        self.unanswered.is_empty() && self.orphaned.is_empty() && self.duplicated.is_empty() && self.malformed == 0
    }
}

impl std::fmt::Display for Repairs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let ids = |ids: &[String]| ids.iter().map(|id| format!("`{id}`")).collect::<Vec<_>>().join(", ");
        if !self.unanswered.is_empty() {
            parts.push(format!("tool calls with no result right after them ({})", ids(&self.unanswered)));
        }
        if !self.orphaned.is_empty() {
            parts.push(format!("tool results with no call right before them ({})", ids(&self.orphaned)));
        }
        if !self.duplicated.is_empty() {
            parts.push(format!("second results for one call ({})", ids(&self.duplicated)));
        }
        if self.malformed > 0 {
            parts.push(format!("{} tool-call lists without call ids", self.malformed));
        }
        f.write_str(&parts.join("; "))
    }
}

/// The call ids of an assistant message's tool calls, in order; empty when it has none.
fn call_ids(message: &LlmMessage) -> Vec<String> {
    let Some(calls) = message.tool_calls.as_ref().and_then(serde_json::Value::as_array) else { return Vec::new() };
    calls.iter().filter_map(|call| call.get("id")?.as_str().map(str::to_owned)).collect()
}

/// Cuts `messages` (`capacity` of them at most) into units. An exchange collects the results of
/// its calls up to the next assistant message (the next model step); anything else met before
/// the last result is a message created while the calls ran.
fn group(messages: impl IntoIterator<Item = LlmMessage>, capacity: usize, repairs: &mut Repairs) -> Vec<Unit> {
    let mut units = Vec::with_capacity(capacity);
    let mut messages = messages.into_iter().peekable();
    while let Some(mut message) = messages.next() {
        let is_assistant = message.role == Role::Assistant.as_str();
        if message.role == Role::Tool.as_str() {
            repairs.orphaned.push(message.tool_call_id.clone().unwrap_or_default());
            continue;
        }
        let ids = if is_assistant { call_ids(&message) } else { Vec::new() };
        if ids.is_empty() {
            if message.tool_calls.take().is_some() {
                repairs.malformed += 1;
                if message.content.as_deref().is_none_or(str::is_empty) {
                    continue;
                }
            }
            units.push(Unit::Message(message));
            continue;
        }
        let mut results: Vec<Option<LlmMessage>> = vec![None; ids.len()];
        let mut pending = ids.len();
        let mut during = Vec::new();
        while pending > 0 {
            if messages.peek().is_none_or(|next| next.role == Role::Assistant.as_str()) {
                break;
            }
            let Some(next) = messages.next() else { break };
            if next.role != Role::Tool.as_str() {
                during.push(next);
                continue;
            }
            let id = next.tool_call_id.clone().unwrap_or_default();
            match ids.iter().position(|call| *call == id) {
                Some(at) if results[at].is_none() => {
                    results[at] = Some(next);
                    pending -= 1;
                }
                Some(_) => repairs.duplicated.push(id),
                None => repairs.orphaned.push(id),
            }
        }
        let mut answered: Vec<&str> =
            ids.iter().zip(&results).filter(|(_, result)| result.is_some()).map(|(id, _)| id.as_str()).collect();
        repairs
            .unanswered
            .extend(ids.iter().zip(&results).filter(|(_, result)| result.is_none()).map(|(id, _)| id.clone()));
        if let Some(serde_json::Value::Array(calls)) = message.tool_calls.as_mut() {
            // A call goes unless it has a result; a second call under one id never has one (its id
            // leaves `answered` with the first).
            calls.retain(|call| {
                let id = call.get("id").and_then(serde_json::Value::as_str);
                let at = id.and_then(|id| answered.iter().position(|answered| *answered == id));
                at.map(|at| answered.swap_remove(at)).is_some()
            });
        }
        let results: Vec<LlmMessage> = results.into_iter().flatten().collect();
        if results.is_empty() {
            message.tool_calls = None;
            if message.content.as_deref().is_some_and(|text| !text.is_empty()) {
                units.push(Unit::Message(message));
            }
            units.extend(during.into_iter().map(Unit::Message));
        } else {
            units.push(Unit::Exchange { call: message, results, during });
        }
    }
    units
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

    fn call(ids: &[&str], content: Option<&str>) -> LlmMessage {
        let calls: Vec<_> = ids.iter().map(|id| serde_json::json!({"id": id, "type": "function"})).collect();
        let mut call = LlmMessage::new("assistant", "").with_tool_calls(calls.into());
        call.content = content.map(str::to_owned);
        call
    }

    fn result(id: &str) -> LlmMessage {
        LlmMessage::new("tool", id).with_tool_call_id(id)
    }

    fn shape(messages: &[LlmMessage]) -> Vec<String> {
        messages
            .iter()
            .map(|m| match (&m.tool_calls, &m.tool_call_id) {
                (Some(_), _) => format!("calls {}", super::call_ids(m).join(",")),
                (None, Some(id)) => format!("result {id}"),
                (None, None) => format!("{} {}", m.role, m.content.as_deref().unwrap_or_default()),
            })
            .collect()
    }

    #[test]
    fn r9_unanswered_calls_are_not_sent_and_their_message_goes_when_nothing_is_left() {
        let repaired = repair_prefiltered(vec![
            LlmMessage::new("user", "u1"),
            call(&["a", "b"], None),
            result("b"),
            LlmMessage::new("user", "during"),
            call(&["c"], Some("let me look")),
            LlmMessage::new("user", "u2"),
            call(&["d"], None),
            result("x"),
            result("d"),
            result("d"),
        ]);
        assert_eq!(
            shape(&repaired),
            [
                "user u1",
                "calls b",
                "result b",
                "user during",
                "assistant let me look",
                "user u2",
                "calls d",
                "result d"
            ]
        );
        assert_eq!(crate::model::ScriptedModel::check_messages(&repaired), Ok(()));
    }

    #[test]
    fn r9_results_are_sent_in_the_order_of_the_calls() {
        let repaired = repair_prefiltered(vec![call(&["a", "b"], None), result("b"), result("a")]);
        assert_eq!(shape(&repaired), ["calls a,b", "result a", "result b"]);
    }
}
