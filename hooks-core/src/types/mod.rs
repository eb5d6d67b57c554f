//! The specification's data types, serialized to exactly the JSON the specification shows.
//!
//! This module only declares its children and re-exports their types; what several children
//! share ([`ExtraFields`] and its field-by-field `Clone`) lives in `extra`.

#[macro_use]
mod extra;

mod context;
mod decision;
mod execution;
mod llm;
mod message;
mod tool;
mod user;

pub use context::{HookExecutionContext, HookSource, PackageSignature};
pub use decision::{OnFailure, ToolDecision};
pub use execution::{AbortSignal, ExecutionState, Side};
pub use extra::ExtraFields;
pub use llm::LlmMessage;
pub use message::{HookMessage, MessageRecord, MessageUpdate, Role};
pub use tool::{
    Attachment, AttachmentRef, HookToolCall, HookToolResult, ToolAttachment, ToolCallFunction, ToolCallRecord,
    ToolCallType, ToolStatus,
};
pub use user::{UserEvent, UserState};
