//! What a model answers: the [`Model`] trait and the events of its streamed response.

use super::error::ModelError;
use super::request::ModelRequest;
use super::usage::{FinishReason, Usage};

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

    /// The model id a request sends when the prompt names the model `requested` (the name it
    /// was added under): what the `chat` span records as `gen_ai.request.model`. By default the
    /// requested name itself; a client that sends an id of its own returns that (the
    /// OpenAI-compatible client: the id of `OpenAiConfig::with_model` or `OPENAI_MODEL`).
    ///
    /// ```
    /// use hooks_runtime::model::{Model, ScriptedModel};
    ///
    /// assert_eq!(ScriptedModel::new([]).request_model("ops"), "ops");
    /// ```
    fn request_model<'a>(&'a self, requested: &'a str) -> &'a str {
        requested
    }

    /// The provider, as the OpenTelemetry GenAI conventions name it (`gen_ai.provider.name`:
    /// `openai`, `anthropic`, ...), when it is known; by default it is not.
    ///
    /// ```
    /// use hooks_runtime::model::{Model, ScriptedModel};
    ///
    /// assert_eq!(ScriptedModel::new([]).provider_name(), None);
    /// ```
    fn provider_name(&self) -> Option<&str> {
        None
    }
}

/// What [`RuntimeBuilder::model`](crate::RuntimeBuilder::model) takes: a model, or one already
/// shared as an `Arc` (by several runtimes, or kept to inspect in a test).
///
/// ```
/// use std::sync::Arc;
/// use hooks_runtime::Runtime;
/// use hooks_runtime::model::{Model, ScriptedModel};
///
/// let shared: Arc<dyn Model> = Arc::new(ScriptedModel::new([]));
/// let builder = Runtime::builder().model("a", ScriptedModel::new([])).model("b", shared);
/// # let _ = builder;
/// ```
pub trait IntoModel {
    /// The model, shared.
    fn into_model(self) -> std::sync::Arc<dyn Model>;
}

impl<M: Model> IntoModel for M {
    fn into_model(self) -> std::sync::Arc<dyn Model> {
        std::sync::Arc::new(self)
    }
}

impl<M: Model> IntoModel for std::sync::Arc<M> {
    fn into_model(self) -> std::sync::Arc<dyn Model> {
        self
    }
}

impl IntoModel for std::sync::Arc<dyn Model> {
    fn into_model(self) -> std::sync::Arc<dyn Model> {
        self
    }
}
