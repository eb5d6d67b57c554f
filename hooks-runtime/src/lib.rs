//! Agent lifecycle hooks for Rust, as the Standard Agents hooks specification defines them.
//!
//! Annotate a function with [`macro@hook`], reference it from a prompt ([`define_prompt!`]) or an
//! agent ([`define_agent!`]), and the [`Runtime`] runs it exactly where the specification says.
//! Mistakes in kinds, ids, signatures and references are compile errors on the wrong token.
//!
//! ```
//! use hooks_runtime::prelude::*;
//! use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
//! use hooks_runtime::{Runtime, ThreadOptions};
//!
//! #[hook(filter_messages, id = "limit_to_20_messages")]
//! async fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
//!     let skip = messages.len().saturating_sub(20);
//!     messages.into_iter().skip(skip).collect()
//! }
//!
//! define_prompt! { name: support_prompt, model: "scripted", prompt: "Help.", hooks: [limit_to_20_messages] }
//! define_agent! { name: support_agent, side_a: { prompt: support_prompt, stop_on_response: true } }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder()
//!     .agent::<support_agent>()
//!     .model("scripted", ScriptedModel::new([ScriptedResponse::text("Happy to help.")]))
//!     .build()
//!     .unwrap();
//! let thread = runtime.create_thread("support_agent", ThreadOptions::default()).await.unwrap();
//! assert_eq!(thread.send("Hello").await.unwrap().reply.as_deref(), Some("Happy to help."));
//! # });
//! ```
//!
//! What the crate root holds: what the quickstart uses, the macros and the modules.
//!
//! - Writing hooks: [`macro@hook`], [`define_prompt!`], [`define_agent!`], [`keep_last_messages`],
//!   and [`macro@async_trait`] for the runtime's async traits. The [`prelude`] has what a hook author
//!   writes.
//! - Running: [`Runtime`] (built by a [`RuntimeBuilder`], or a [`BuildError`]), [`AgentHandle`],
//!   [`Thread`] with its [`ThreadOptions`], [`ThreadEvent`]s and [`RunOutcome`]s (a failed run is
//!   a [`RunFailed`]), [`RuntimeError`], [`InputId`] for queued inputs and [`Recovery`] after a
//!   crash; [`explain`] and [`explain_json`] to read an agent's resolved hooks.
//!
//! And by module:
//!
//! - [`types`]: the specification's data types, as a hook sees them.
//! - [`definition`]: definitions as the macros build them, to read, and the limits every hook
//!   runs under.
//! - [`resolution`]: the registry of linked hooks and each agent's resolved hooks.
//! - [`model`], [`tool`] and [`store`]: what a runtime is built with.
//! - [`approvals`]: tool calls that wait for a person.
//! - [`testing`]: testing a hook without a runtime.
//! - [`declarative`]: declarative YAML tool-call hooks (feature `declarative`, on by default).
//! - `otel`: the runtime's spans (OpenTelemetry GenAI semantic conventions) exported over OTLP
//!   (feature `otel`).
//!
//! What the generated code calls (hook handlers and their futures, the linked-hook registry,
//! resolved chains) is under `__private`, which is not public API.
//!
//! The runtime needs a tokio runtime with its time driver (`enable_all`): async hooks run
//! under timeouts.
//!
//! Setters follow one rule. A builder or options type that is only written, never read back
//! ([`RuntimeBuilder`], [`ThreadOptions`], `store::PostgresOptions`, `mcp::McpTransport`),
//! names a setter for what it sets: `.store(..)`, `.user(..)`, `.schema(..)`. A value whose
//! parts are read back through getters of those names ([`model::OpenAiConfig`],
//! [`model::ScriptedResponse`], [`tool::FnTool`], errors and records) names the setter
//! `with_<part>`, so that `config.deadline()` reads and `config.with_deadline(..)` writes. A
//! setter takes what it stores, shared or not: `.model(name, model)` takes a model or an
//! `Arc` of one ([`model::IntoModel`]), as `.store(..)` does ([`store::IntoMessageStore`]).

// docs.rs builds with every feature and `--cfg docsrs`: feature-gated items get a badge there.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use hooks_core::{explain, explain_json};
pub use hooks_macros::{define_agent, define_prompt, hook};

pub use async_trait::async_trait;

mod admission_record;
mod approval_records;
pub mod approvals;
#[cfg(feature = "declarative")]
#[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
pub mod declarative;
pub mod definition;
mod dispatch;
#[cfg(any(feature = "openai", feature = "declarative"))]
mod error_chain;
mod events;
mod governing;
mod hex;
mod history;
mod ids;
mod json_progress;
mod limits;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod model;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
#[cfg(any(feature = "declarative", feature = "mcp"))]
mod process_group;
mod reasons;
mod remembered_approvals;
pub mod resolution;
mod run_error;
mod runtime;
mod shared;
mod spans;
pub mod store;
pub mod testing;
mod thread;
mod thread_side;
pub mod tool;
pub mod types;
mod user;

pub use admission_record::{AdmissionEntry, AdmissionRecord, RememberedUse};
pub use events::ThreadEvent;
pub use history::keep_last_messages;
pub use run_error::{RunError, RunErrorKind};
pub use runtime::{AgentHandle, BuildError, Runtime, RuntimeBuilder};
pub use thread::{InputId, Recovery, RecoveryPolicy, RunFailed, RunOutcome, RuntimeError, Thread, ThreadOptions};

/// What a hook author needs: `use hooks_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{define_agent, define_prompt, hook, keep_last_messages};
    pub use hooks_core::{
        Agent, Hook, HookError, HookExecutionContext, HookKind, HookMessage, HookResult, HookSource, HookToolCall,
        HookToolResult, LlmMessage, MessageRecord, MessageUpdate, Prompt, Registry, ResolvedAgent, Role, ThreadState,
        ToolCallRecord, ToolDecision, ToolStatus, UserState,
    };
}

#[doc(hidden)]
pub mod __private;

#[cfg(feature = "__bench")]
#[doc(hidden)]
pub mod __bench;

#[cfg(feature = "__test")]
#[doc(hidden)]
pub mod __test;
