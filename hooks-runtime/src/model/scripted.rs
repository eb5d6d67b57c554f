use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};

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

    /// The events, in order.
    pub fn events(&self) -> &[ModelEvent] {
        &self.events
    }
}

fn chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|chunk| chunk.iter().collect()).collect()
}

/// A [`Model`] that answers with scripted responses, in order, and records every request.
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
        self.inner.requests.lock().unwrap_or_else(PoisonError::into_inner).push(request);
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
