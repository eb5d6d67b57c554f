use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use hooks_core::LlmMessage;

use super::{FinishReason, Model, ModelError, ModelEvent, ModelRequest, ModelStream, ProviderError, Usage};

/// One scripted response: the events it streams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptedResponse {
    events: Vec<ModelEvent>,
    tool_calls: usize,
}

impl ScriptedResponse {
    /// A text reply, streamed in a few deltas.
    pub fn text(text: &str) -> Self {
        Self::default().then_text(text)
    }

    /// A response with one tool call.
    pub fn tool_call(id: &str, name: &str, arguments: &str) -> Self {
        Self::default().then_tool_call(id, name, arguments)
    }

    /// Adds text to the response, in deltas of at most 16 characters.
    pub fn then_text(mut self, text: &str) -> Self {
        for piece in chunks(text, 16) {
            self.events.push(ModelEvent::TextDelta(piece));
        }
        self
    }

    /// Adds a tool call, its arguments streamed in fragments of at most 7 characters, so they are
    /// cut mid-string and mid-escape as real streams are.
    pub fn then_tool_call(self, id: &str, name: &str, arguments: &str) -> Self {
        self.then_tool_call_in_fragments(id, name, &chunks(arguments, 7))
    }

    /// Adds a tool call whose arguments arrive in exactly these fragments.
    pub fn then_tool_call_in_fragments(mut self, id: &str, name: &str, fragments: &[String]) -> Self {
        let index = self.tool_calls;
        self.tool_calls += 1;
        self.events.push(ModelEvent::ToolCallStart { index, id: id.to_owned(), name: name.to_owned() });
        for fragment in fragments {
            self.events.push(ModelEvent::ToolCallArguments { index, fragment: fragment.clone() });
        }
        self.events.push(ModelEvent::ToolCallEnd { index });
        self
    }

    /// Ends the response with this finish reason, as a provider's last chunk says it. Without
    /// one, the runtime takes the reply to have stopped normally.
    ///
    /// ```
    /// use hooks_runtime::model::{FinishReason, ModelEvent, ScriptedResponse};
    ///
    /// let cut = ScriptedResponse::text("The answer is").with_finish_reason(FinishReason::Length);
    /// assert_eq!(cut.events().last(), Some(&ModelEvent::Finished(FinishReason::Length)));
    /// ```
    #[must_use]
    pub fn with_finish_reason(mut self, reason: FinishReason) -> Self {
        self.events.push(ModelEvent::Finished(reason));
        self
    }

    /// Reports this usage at the end of the response, as a provider's usage chunk does.
    ///
    /// ```
    /// use hooks_runtime::model::{ModelEvent, ScriptedResponse, Usage};
    ///
    /// let reply = ScriptedResponse::text("Hi.").with_usage(Usage::new(12, 2, 14));
    /// assert_eq!(reply.events().last(), Some(&ModelEvent::Usage(Usage::new(12, 2, 14))));
    /// ```
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.events.push(ModelEvent::Usage(usage));
        self
    }

    /// The events, in order.
    pub fn events(&self) -> &[ModelEvent] {
        &self.events
    }
}

/// The ids of an assistant message's `tool_calls`, which must be a non-empty array of calls
/// with unique string ids.
fn checked_call_ids(index: usize, calls: &serde_json::Value) -> Result<Vec<String>, String> {
    let calls = calls
        .as_array()
        .filter(|calls| !calls.is_empty())
        .ok_or_else(|| format!("message {index} has `tool_calls` that is not a non-empty array"))?;
    let mut ids: Vec<String> = Vec::with_capacity(calls.len());
    for call in calls {
        let id = call
            .get("id")
            .and_then(serde_json::Value::as_str)
            .ok_or_else(|| format!("message {index} has a tool call without a string `id`"))?;
        if ids.iter().any(|known| known == id) {
            return Err(format!("message {index} has two tool calls with the id `{id}`"));
        }
        ids.push(id.to_owned());
    }
    Ok(ids)
}

fn chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|chunk| chunk.iter().collect()).collect()
}

/// A [`Model`] that answers with scripted responses, in order, and records every request.
///
/// Like a real provider, it refuses a request whose messages are not a valid sequence (see
/// [`ScriptedModel::check_messages`]) with an HTTP 400 [`ModelError`], after recording it; a
/// test that sends an invalid sequence on purpose opts out with
/// [`ScriptedModel::accepting_invalid_requests`].
///
/// ```
/// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
///
/// let model = ScriptedModel::new([
///     ScriptedResponse::tool_call("call_1", "get_github_issue", r#"{"number":12}"#),
///     ScriptedResponse::text("Issue #12 duplicates #7."),
/// ]);
/// assert_eq!(model.requests().len(), 0);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScriptedModel {
    inner: Arc<ScriptedInner>,
}

#[derive(Debug, Default)]
struct ScriptedInner {
    responses: Mutex<VecDeque<ScriptedResponse>>,
    requests: Mutex<Vec<ModelRequest>>,
    delivered: AtomicUsize,
    accept_invalid: std::sync::atomic::AtomicBool,
}

impl ScriptedModel {
    /// A model that answers with `responses`, one per request.
    pub fn new(responses: impl IntoIterator<Item = ScriptedResponse>) -> Self {
        let model = Self::default();
        model.push_all(responses);
        model
    }

    /// Appends responses to the script.
    pub fn push_all(&self, responses: impl IntoIterator<Item = ScriptedResponse>) {
        self.inner.responses.lock().unwrap_or_else(PoisonError::into_inner).extend(responses);
    }

    /// This model, taking requests that a provider would refuse: for a test that sends an
    /// invalid sequence on purpose.
    pub fn accepting_invalid_requests(self) -> Self {
        self.inner.accept_invalid.store(true, Ordering::SeqCst);
        self
    }

    /// Checks `messages` the way OpenAI-compatible providers do (R9): every assistant message
    /// with tool calls is followed at once by exactly one tool result per call, every tool
    /// result answers a call of the assistant message right before its group, call ids are
    /// unique in their message, and roles are ones providers know. The error names the
    /// message index, role and call id, never contents.
    ///
    /// The runtime's own requests always pass (R9): messages that hooks inject while tool calls
    /// run are sent after the results, `include_past_tools: false` leaves out whole exchanges,
    /// and a `prefilter_llm_history` output that splits an exchange is repaired with a logged
    /// warning (results without their call and calls without their result are left out) rather
    /// than failing the step.
    ///
    /// ```
    /// use hooks_runtime::types::LlmMessage;
    /// use hooks_runtime::model::ScriptedModel;
    ///
    /// let call = LlmMessage::new("assistant", "").with_tool_calls(serde_json::json!([{"id": "call_1",
    ///     "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]));
    /// let result = LlmMessage::new("tool", "42").with_tool_call_id("call_1");
    /// let user = LlmMessage::new("user", "thanks");
    /// assert!(ScriptedModel::check_messages(&[call.clone(), result.clone(), user.clone()]).is_ok());
    /// let error = ScriptedModel::check_messages(&[call, user, result]).unwrap_err();
    /// assert!(error.contains("`call_1`"), "{error}");
    /// ```
    pub fn check_messages(messages: &[LlmMessage]) -> Result<(), String> {
        let mut index = 0;
        while index < messages.len() {
            let message = &messages[index];
            match &*message.role {
                "system" | "developer" | "user" => {}
                "tool" => {
                    return Err(format!(
                        "message {index} is a tool result for call `{}` that does not follow the assistant \
                         message calling it",
                        message.tool_call_id.as_deref().unwrap_or("")
                    ));
                }
                "assistant" => {
                    if let Some(calls) = &message.tool_calls {
                        let ids = checked_call_ids(index, calls)?;
                        let mut answered = vec![false; ids.len()];
                        for offset in 1..=ids.len() {
                            let Some(next) = messages.get(index + offset).filter(|next| next.role == "tool") else {
                                let unanswered = ids.iter().zip(&answered).find(|(_, done)| !**done).map(|(id, _)| id);
                                let found = messages.get(index + offset).map_or("the end", |next| &*next.role);
                                return Err(format!(
                                    "message {index} calls tool `{}` but message {} is {found}, not its result: \
                                     each tool call must be answered by a tool message right after the call",
                                    unanswered.map_or("", String::as_str),
                                    index + offset
                                ));
                            };
                            let id = next.tool_call_id.as_deref().unwrap_or("");
                            match ids.iter().position(|call| call == id) {
                                Some(at) if !answered[at] => answered[at] = true,
                                Some(_) => {
                                    return Err(format!(
                                        "message {} is a second tool result for call `{id}`",
                                        index + offset
                                    ));
                                }
                                None => {
                                    return Err(format!(
                                        "message {} is a tool result for call `{id}`, which message {index} does not make",
                                        index + offset
                                    ));
                                }
                            }
                        }
                        index += ids.len();
                    }
                }
                other => return Err(format!("message {index} has the unknown role `{other}`")),
            }
            index += 1;
        }
        Ok(())
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.inner.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// How many stream events have been handed out so far, across all responses: lets a test
    /// see how far a stream was read when a hook ran.
    pub fn delivered_events(&self) -> usize {
        self.inner.delivered.load(Ordering::SeqCst)
    }

    /// How many scripted responses are left.
    pub fn remaining(&self) -> usize {
        self.inner.responses.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

#[async_trait::async_trait]
impl Model for ScriptedModel {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let invalid = if self.inner.accept_invalid.load(Ordering::SeqCst) {
            None
        } else {
            Self::check_messages(&request.messages).err()
        };
        self.inner.requests.lock().unwrap_or_else(PoisonError::into_inner).push(request);
        if let Some(reason) = invalid {
            // The error's text is the status only, as a provider's is; the reason is logged.
            tracing::warn!(target: "hooks_runtime::model", "the scripted model refused the request: {reason}");
            let error = ProviderError::new(400, format!("invalid request messages: {reason}"))
                .with_kind("invalid_request_error")
                .with_param("messages");
            return Err(error.into());
        }
        let response = self
            .inner
            .responses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .ok_or_else(|| ModelError::Other("the scripted model has no response left".into()))?;
        Ok(Box::new(ScriptedStream { events: response.events.into(), inner: self.inner.clone() }))
    }
}

struct ScriptedStream {
    events: VecDeque<ModelEvent>,
    inner: Arc<ScriptedInner>,
}

#[async_trait::async_trait]
impl ModelStream for ScriptedStream {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        let event = self.events.pop_front()?;
        self.inner.delivered.fetch_add(1, Ordering::SeqCst);
        // Yield so concurrent work interleaves with the stream as it would on a network.
        tokio::task::yield_now().await;
        Some(Ok(event))
    }
}
