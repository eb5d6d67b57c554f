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
//! What the crate root holds, by use:
//!
//! - Writing hooks: [`macro@hook`], [`define_prompt!`], [`define_agent!`], and the
//!   specification's data types: [`HookKind`], [`HookMessage`], [`MessageRecord`],
//!   [`MessageUpdate`], [`HookToolCall`], [`HookToolResult`], [`LlmMessage`], [`ThreadState`],
//!   [`UserState`], [`HookExecutionContext`], [`HookError`]. The [`prelude`] has what a hook
//!   author writes.
//! - Definitions as the macros build them, to read: [`AgentDef`], [`PromptDef`], [`HookDef`],
//!   [`SideDef`], [`SubagentRelationship`], [`ParentHookRequirement`].
//! - Composition and resolution: [`ResolvedAgent`], [`explain`], [`explain_json`], [`Registry`].
//! - Running: [`Runtime`], [`Thread`], [`ThreadEvent`], [`RunOutcome`], with [`model`], [`tool`]
//!   and [`store`].
//! - Testing a hook without a runtime: [`DetachedThread`], [`ExecutionState`].
//! - Declarative YAML tool-call hooks: [`declarative`] (feature `declarative`, on by default).
//!
//! What the generated code calls (hook handlers and their futures, the linked-hook registry,
//! resolved chains) is under `__private`, which is not public API.
//!
//! The runtime needs a tokio runtime with its time driver (`enable_all`): async hooks run
//! under timeouts.

// docs.rs builds with every feature and `--cfg docsrs`: feature-gated items get a badge there.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use hooks_core::{
    AbortSignal, Agent, AgentDef, Attachment, AttachmentRef, DetachedThread, DuplicateHookId, ExecutionState,
    ExtraFields, Hook, HookDef, HookError, HookExecutionContext, HookKind, HookLocation, HookMessage, HookResult,
    HookRole, HookScope, HookSource, HookToolCall, HookToolResult, LlmMessage, MessageQuery, MessageRecord,
    MessageUpdate, OnFailure, PackageSignature, ParentHookRequirement, ParentHookStage, Participant, Prompt, PromptDef,
    Registry, RegistryError, ResolutionError, ResolvedAgent, Role, Side, SideDef, SubagentRelationship, ThreadServices,
    ThreadState, ToolAttachment, ToolCallFunction, ToolCallRecord, ToolCallType, ToolDecision, ToolStatus, UserEvent,
    UserState, explain, explain_json,
};
pub use hooks_macros::{define_agent, define_prompt, hook};

pub use async_trait::async_trait;

mod approvals;
#[cfg(feature = "declarative")]
#[cfg_attr(docsrs, doc(cfg(feature = "declarative")))]
pub mod declarative;
mod dispatch;
mod events;
mod governing;
mod history;
mod ids;
mod json_progress;
pub mod model;
mod reasons;
mod runtime;
pub mod store;
mod thread;
pub mod tool;
mod user;

pub use approvals::{ApprovalDecision, ApprovalReason, ApprovalState, ParkedToolCall, ToolCallChange};
pub use events::ThreadEvent;
pub use history::keep_last_messages;
pub use runtime::{AgentHandle, BuildError, DEFAULT_HOOK_TIMEOUT, Runtime, RuntimeBuilder, ToolAuthorizer};
pub use thread::{
    ApprovalChoice, ApprovalError, InputId, MAX_HOOK_DEPTH, Recovery, RunFailed, RunOutcome, RuntimeError, Thread,
    ThreadOptions,
};
pub use tool::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

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
