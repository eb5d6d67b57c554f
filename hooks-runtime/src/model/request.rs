//! What a model is asked: the history and the tools on offer.

use hooks_core::{AbortSignal, LlmMessage};
use serde::{Deserialize, Serialize};

/// A tool as the model is told about it.
///
/// ```
/// use hooks_runtime::model::ToolSpec;
///
/// let spec = ToolSpec::new("lookup", "Finds an order.", serde_json::json!({"type": "object"}));
/// assert_eq!(spec.name, "lookup");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// The tool `name`, described by `description`, whose arguments follow the JSON schema
    /// `parameters`.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: serde_json::Value) -> Self {
        ToolSpec { name: name.into(), description: description.into(), parameters }
    }
}

/// One provider request: the history after `prefilter_llm_history`, and the tools on offer.
///
/// ```
/// use hooks_runtime::types::LlmMessage;
/// use hooks_runtime::model::ModelRequest;
///
/// let request = ModelRequest::new("gpt-4o-mini", vec![LlmMessage::new("user", "Hi.")], Vec::new());
/// assert!(request.abort.is_none());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The model's name, as the prompt gives it.
    pub model: String,
    /// The request history, system message first.
    pub messages: Vec<LlmMessage>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The run's abort signal, which the runtime sets: a model that waits (to retry, say)
    /// gives up with [`ModelError::Cancelled`](super::ModelError::Cancelled) once it fires. Dropping the future of
    /// [`Model::stream`](super::Model::stream) cancels as well.
    pub abort: Option<AbortSignal>,
}

impl ModelRequest {
    /// A request with no abort signal.
    pub fn new(model: impl Into<String>, messages: Vec<LlmMessage>, tools: Vec<ToolSpec>) -> Self {
        ModelRequest { model: model.into(), messages, tools, abort: None }
    }

    /// The request, given up once `abort` fires.
    #[must_use]
    pub fn with_abort(mut self, abort: AbortSignal) -> Self {
        self.abort = Some(abort);
        self
    }

    /// Whether the abort signal has fired.
    pub fn is_aborted(&self) -> bool {
        self.abort.as_ref().is_some_and(AbortSignal::is_aborted)
    }
}

/// Two requests are equal when they ask the same: the abort signal is not compared.
impl PartialEq for ModelRequest {
    fn eq(&self, other: &Self) -> bool {
        self.model == other.model && self.messages == other.messages && self.tools == other.tools
    }
}
