//! The model a prompt runs on: a streaming [`Model`] trait, the events its responses stream,
//! and [`ScriptedModel`] for tests and examples.

#[cfg(feature = "openai")]
mod openai;
mod scripted;

#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub use openai::{OpenAiConfig, OpenAiModel};
pub use scripted::{ScriptedModel, ScriptedResponse};

use std::fmt;

use hooks_core::LlmMessage;
use serde::{Deserialize, Serialize};

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub parameters: serde_json::Value,
}

/// One provider request: the history after `prefilter_llm_history`, and the tools on offer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The model's name, as the prompt gives it.
    pub model: String,
    /// The request history, system message first.
    pub messages: Vec<LlmMessage>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
}

/// One event of a streamed response.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// What went wrong talking to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// The endpoint answered with an HTTP error status.
    Http {
        /// The status code.
        status: u16,
        /// The endpoint's explanation, if it gave one.
        message: String,
    },
    /// The response could not be understood.
    Malformed(String),
    /// No answer in time.
    Timeout(String),
    /// The connection failed.
    Transport(String),
    /// The response passed a size cap, such as the most reply text one response may hold; the
    /// stream was abandoned there. The text names the cap and its value, never the response's
    /// contents.
    TooLarge(String),
    /// Anything else, such as a script that ran out of responses.
    Other(String),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Http { status, message } => write!(f, "model endpoint returned HTTP {status}: {message}"),
            ModelError::Malformed(detail) => write!(f, "malformed model response: {detail}"),
            ModelError::Timeout(detail) => write!(f, "model request timed out: {detail}"),
            ModelError::Transport(detail) => write!(f, "model connection failed: {detail}"),
            ModelError::TooLarge(detail) => write!(f, "model response too large: {detail}"),
            ModelError::Other(detail) => write!(f, "model error: {detail}"),
        }
    }
}

impl std::error::Error for ModelError {}

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
