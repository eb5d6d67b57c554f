//! The floor of a turn: the least model and the same turn written by hand, shared by the turn
//! benchmark (`turn -- floor`, timed beside `thread.send`) and by
//! `tests/turn_allocations.rs` (allocations, and instructions through
//! `scripts/turn_instructions.py`).
//!
//! [`MinimalModel`] is the least a [`Model`] can be: one text delta, or one tool call whose
//! arguments come in one fragment, and it keeps nothing. [`hand_written_turn`] is what an
//! application would write around that trait without a framework: the user's message kept with
//! an id, a role, its text and a time; the request assembled (system first, each message copied
//! into an [`LlmMessage`]); the history hooks called by hand; the model streamed through
//! [`Model::stream`] and its text or tool call assembled; for a tool call the call kept, its
//! arguments parsed with serde_json, an async tool function called, its result rewritten and
//! kept, the model asked again; the reply kept. No hook chain, store, event, span, status,
//! governing or panic isolation: what a turn of the runtime adds to it is what the comparison
//! measures.

#![allow(dead_code, unreachable_pub, missing_docs)]

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream, ToolSpec};
use hooks_runtime::types::LlmMessage;

/// The tool the tool turn calls.
pub const TOOL: &str = "lookup";
/// The arguments [`MinimalModel`] writes for it.
pub const TOOL_ARGUMENTS: &str = r#"{"key":"answer"}"#;
/// What [`MinimalModel`] replies with text.
pub const REPLY: &str = "A short reply.";
/// The user's message of every counted or timed turn.
pub const USER_TEXT: &str = "What did we say?";
/// The system prompt of the text turn's agent.
pub const TEXT_PROMPT: &str = "Reply.";
/// The system prompt of the tool turn's agent.
pub const TOOL_PROMPT: &str = "Use the tool.";
/// Messages in a thread (or a hand-written history) before the turn.
pub const HISTORY: usize = 10;

/// The `i`th message of the history every scenario starts from.
pub fn history_text(i: usize) -> String {
    format!("Message {i}: a line of conversation of ordinary length, about sixty-four characters.")
}

/// The least a model can be: it answers a user message with one text delta, or, when the
/// request offers tools, with one call of [`TOOL`] whose arguments come in one fragment, and a
/// tool's result with one text delta. It keeps nothing.
pub struct MinimalModel;

#[hooks_runtime::async_trait]
impl Model for MinimalModel {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let last_is_user = request.messages.last().is_some_and(|message| message.role == "user");
        let events = if last_is_user && !request.tools.is_empty() {
            vec![
                ModelEvent::ToolCallStart { index: 0, id: "call_1".into(), name: TOOL.into() },
                ModelEvent::ToolCallArguments { index: 0, fragment: TOOL_ARGUMENTS.into() },
                ModelEvent::ToolCallEnd { index: 0 },
            ]
        } else {
            vec![ModelEvent::TextDelta(REPLY.into())]
        };
        Ok(Box::new(MinimalStream(events.into_iter())))
    }
}

struct MinimalStream(std::vec::IntoIter<ModelEvent>);

#[hooks_runtime::async_trait]
impl ModelStream for MinimalStream {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        self.0.next().map(Ok)
    }
}

/// A tool call as the hand-written turn keeps it.
#[derive(Clone)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A message as the hand-written turn keeps it.
pub struct Message {
    pub id: String,
    pub role: &'static str,
    pub content: Option<String>,
    pub tool_calls: Option<Vec<Call>>,
    pub tool_call_id: Option<String>,
    pub created_at: SystemTime,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

impl Message {
    fn new(role: &'static str, content: Option<String>) -> Self {
        let id = format!("msg_{:016x}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        Message { id, role, content, tool_calls: None, tool_call_id: None, created_at: SystemTime::now() }
    }

    /// The message as the provider is sent it.
    fn to_llm(&self) -> LlmMessage {
        let mut message = LlmMessage::new(self.role, self.content.clone().unwrap_or_default());
        if self.content.is_none() {
            message.content = None;
        }
        if let Some(calls) = &self.tool_calls {
            let calls = calls
                .iter()
                .map(|call| {
                    serde_json::json!({"id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments}})
                })
                .collect();
            message.tool_calls = Some(serde_json::Value::Array(calls));
        }
        message.tool_call_id.clone_from(&self.tool_call_id);
        message
    }
}

/// A hand-written history of [`HISTORY`] messages, user and assistant in turn.
pub fn history() -> Vec<Message> {
    (0..HISTORY).map(|i| Message::new(if i % 2 == 0 { "user" } else { "assistant" }, Some(history_text(i)))).collect()
}

/// A history hook called by hand: it keeps every message, as the benches' in-place hooks do.
#[inline(never)]
pub fn keep_all(messages: &mut Vec<LlmMessage>) {
    black_box(messages);
}

/// The hand-written tool: any arguments, the text `42`.
async fn lookup(arguments: serde_json::Value) -> String {
    black_box(arguments);
    "42".to_owned()
}

/// The hand-written counterpart of `before_store_tool_result`: the result as it is kept.
#[inline(never)]
fn rewrite(result: String) -> String {
    black_box(result)
}

/// One turn written by hand: `text` from the user, answered by `model` (named `model_name`)
/// under `system` with `tools` on offer, each request's messages passed through `hooks`; every
/// message kept in `messages`. Returns the reply.
pub async fn hand_written_turn(
    model: &dyn Model,
    model_name: &str,
    system: &str,
    tools: &[ToolSpec],
    hooks: &[fn(&mut Vec<LlmMessage>)],
    messages: &mut Vec<Message>,
    text: &str,
) -> Result<String, ModelError> {
    messages.push(Message::new("user", Some(text.to_owned())));
    loop {
        let mut request = Vec::with_capacity(messages.len() + 1);
        request.push(LlmMessage::new("system", system));
        request.extend(messages.iter().map(Message::to_llm));
        for hook in hooks {
            hook(&mut request);
        }
        let mut stream = model.stream(ModelRequest::new(model_name, request, tools.to_vec())).await?;
        let mut reply = String::new();
        let mut calls: Vec<Call> = Vec::new();
        while let Some(event) = stream.next_event().await {
            match event? {
                ModelEvent::TextDelta(delta) if reply.is_empty() => reply = delta,
                ModelEvent::TextDelta(delta) => reply.push_str(&delta),
                ModelEvent::ToolCallStart { id, name, .. } => calls.push(Call { id, name, arguments: String::new() }),
                ModelEvent::ToolCallArguments { fragment, .. } => {
                    if let Some(call) = calls.last_mut() {
                        if call.arguments.is_empty() {
                            call.arguments = fragment;
                        } else {
                            call.arguments.push_str(&fragment);
                        }
                    }
                }
                _ => {}
            }
        }
        if calls.is_empty() {
            messages.push(Message::new("assistant", Some(reply.clone())));
            return Ok(reply);
        }
        let mut kept = Message::new("assistant", None);
        kept.tool_calls = Some(calls.clone());
        messages.push(kept);
        for call in calls {
            let arguments: serde_json::Value =
                serde_json::from_str(&call.arguments).map_err(|error| ModelError::Malformed(error.to_string()))?;
            let result = rewrite(lookup(arguments).await);
            let mut kept = Message::new("tool", Some(result));
            kept.tool_call_id = Some(call.id);
            messages.push(kept);
        }
    }
}

/// The hand-written counterpart of a scenario: the text turn (`tool` false) or the tool turn,
/// with 4 history hooks called by hand or none, on `messages`; its reply.
pub async fn scenario_turn(messages: &mut Vec<Message>, hooks: bool, tool: bool) -> String {
    let tools = if tool {
        vec![ToolSpec::new(TOOL, "Looks a number up.", serde_json::json!({"type": "object"}))]
    } else {
        Vec::new()
    };
    let system = if tool { TOOL_PROMPT } else { TEXT_PROMPT };
    let hooks: &[fn(&mut Vec<LlmMessage>)] = if hooks { &[keep_all, keep_all, keep_all, keep_all] } else { &[] };
    hand_written_turn(&MinimalModel, "minimal", system, &tools, hooks, messages, USER_TEXT)
        .await
        .expect("the minimal model answers")
}
