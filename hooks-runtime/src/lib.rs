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
//! - Definitions and the specification's data types: [`HookKind`], [`HookMessage`],
//!   [`MessageRecord`], [`HookToolCall`], [`HookToolResult`], [`ThreadState`], [`HookError`].
//! - Composition and resolution: [`ResolvedAgent`], [`explain`], [`Registry`].
//! - Running: [`Runtime`], [`Thread`], [`ThreadEvent`], with [`model`], [`tool`] and [`store`].
//! - Declarative YAML tool-call hooks: [`declarative`].
//!
//! The runtime needs a tokio runtime with its time driver (`enable_all`): async hooks run
//! under timeouts.

pub use hooks_core::*;
pub use hooks_macros::{define_agent, define_prompt, hook};

pub use async_trait::async_trait;

pub mod declarative;
mod dispatch;
mod ids;
pub mod model;
mod progress;
mod runtime;
pub mod store;
mod thread;
pub mod tool;
mod tool_listener;
mod user;
mod user_sync;

pub use runtime::{AgentHandle, BuildError, DEFAULT_HOOK_TIMEOUT, Runtime, RuntimeBuilder, ToolAuthorizer};
pub use thread::{MAX_HOOK_DEPTH, RunFailed, RunOutcome, RuntimeError, Thread, ThreadEvent, ThreadOptions};
pub use tool_listener::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

/// What a hook author needs: `use hooks_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::{define_agent, define_prompt, hook};
    pub use hooks_core::{
        Agent, Hook, HookError, HookExecutionContext, HookKind, HookMessage, HookResult, HookSource, HookToolCall,
        HookToolResult, LlmMessage, MessageRecord, MessageUpdate, Prompt, Registry, ResolvedAgent, Role, ThreadState,
        ToolCallRecord, ToolStatus, UserState,
    };
}

#[doc(hidden)]
pub mod __private;

#[doc(hidden)]
pub mod __bench;
