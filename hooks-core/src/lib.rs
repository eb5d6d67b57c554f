//! The vocabulary of the agent hooks framework: hook kinds, the specification's data types,
//! hook definitions and the registry of linked hooks.
//!
//! Users depend on `hooks-runtime`, which re-exports everything here. What the generated code
//! and the runtime need (hook adapters, linked-hook entries, resolved chains) is under
//! `__private`, which is not public API.

mod compose;
mod def;
mod error;
mod future;
mod kind;
mod registry;
mod state;
mod types;

pub use compose::{
    ActiveContext, Agent, AgentDef, ChainedHook, HookChain, ParentHookRequirement, ParentHookStage, Participant,
    Prompt, PromptDef, ResolutionError, ResolvedAgent, SideDef, SubagentRelationship, explain, explain_json,
};
pub use def::{GuardHook, Hook, HookDef, HookLocation};
pub use error::{HookError, HookResult};
pub use kind::{HookKind, HookRole, HookScope};
pub use registry::{DuplicateHookId, Registry, RegistryError};
pub use state::{DetachedThread, MessageQuery, ThreadServices, ThreadState};
pub use types::{
    AbortSignal, Attachment, AttachmentRef, ExecutionState, ExtraFields, HookExecutionContext, HookMessage, HookSource,
    HookToolCall, HookToolResult, LlmMessage, MessageRecord, MessageUpdate, OnFailure, PackageSignature, Role, Side,
    ToolAttachment, ToolCallFunction, ToolCallRecord, ToolCallType, ToolDecision, ToolStatus, UserEvent, UserState,
};

#[doc(hidden)]
pub mod __private;
