//! The model a prompt runs on: a streaming [`Model`] trait, the events its responses stream,
//! and [`ScriptedModel`] for tests and examples.

mod error;
#[cfg(feature = "openai")]
mod openai;
mod request;
mod response;
mod scripted;
mod usage;

pub use error::{ModelError, ProviderError, ProviderErrorKind};
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub use openai::{OpenAiConfig, OpenAiModel};
pub use request::{ModelRequest, ToolSpec};
pub use response::{IntoModel, Model, ModelEvent, ModelStream};
pub use scripted::{ScriptedModel, ScriptedResponse};
pub use usage::{FinishReason, Usage};
