//! The model a prompt runs on: a streaming [`Model`] trait, the events its responses stream,
//! and [`ScriptedModel`] for tests and examples.

mod error;
#[cfg(feature = "openai")]
mod openai;
mod scripted;
mod usage;

pub use error::{ModelError, ProviderError, ProviderErrorKind};
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub use openai::{OpenAiConfig, OpenAiModel};
pub use scripted::{ScriptedModel, ScriptedResponse};
pub use usage::{FinishReason, Usage};

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
/// use hooks_runtime::LlmMessage;
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
    /// gives up with [`ModelError::Cancelled`] once it fires. Dropping the future of
    /// [`Model::stream`] cancels as well.
    pub abort: Option<AbortSignal>,
}

impl ModelRequest {
    /// A request with no abort signal.
    pub fn new(model: impl Into<String>, messages: Vec<LlmMessage>, tools: Vec<ToolSpec>) -> Self {
        ModelRequest { model: model.into(), messages, tools, abort: None }
    }

    /// The request, given up once `abort` fires.
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

/// One event of a streamed response.
///
/// A model reports text and tool calls as they stream, then, optionally, why the reply ended
/// ([`Finished`](Self::Finished)) and the tokens it used ([`Usage`](Self::Usage)). A model
/// that reports no finish reason is taken to have stopped normally (`tool_calls` when it
/// called tools, `stop` otherwise).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelEvent {
    /// A piece of the reply's text.
    TextDelta(String),
    /// A tool call appeared: its id and name are known, its arguments follow.
    ToolCallStart {
        /// The call's position in the response.
        index: usize,
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A fragment of a tool call's JSON arguments, possibly cut mid-string or mid-escape.
    ToolCallArguments {
        /// The call's position in the response.
        index: usize,
        /// The fragment.
        fragment: String,
    },
    /// A tool call's arguments are complete.
    ToolCallEnd {
        /// The call's position in the response.
        index: usize,
    },
    /// Why the reply ended, as the provider said.
    Finished(FinishReason),
    /// The tokens the response used. When a model reports usage more than once, the last
    /// report counts (some servers send running totals).
    Usage(Usage),
}

/// A streamed response: events until `None`.
#[async_trait::async_trait]
pub trait ModelStream: Send {
    /// The next event, an error, or `None` when the response is complete.
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>>;
}

/// A model that answers requests with a streamed response.
#[async_trait::async_trait]
pub trait Model: Send + Sync + 'static {
    /// Sends the request and returns its response stream.
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError>;
}
