//! The specification's data types, serialized to exactly the JSON the specification shows.

mod context;
mod execution;
mod llm;
mod message;
mod tool;
mod user;

pub use context::{HookExecutionContext, HookSource, PackageSignature};
pub use execution::{AbortSignal, ExecutionState, Side};
pub use llm::LlmMessage;
pub use message::{HookMessage, MessageRecord, MessageUpdate, Role};
pub use tool::{
    Attachment, AttachmentRef, HookToolCall, HookToolResult, ToolAttachment, ToolCallFunction, ToolCallRecord,
    ToolCallType, ToolStatus,
};
pub use user::{UserEvent, UserState};

/// Extra JSON fields carried beside the typed ones, so a field this crate does not model (a
/// hook's `metadata`, a store's `status`) survives every round trip.
pub type ExtraFields = serde_json::Map<String, serde_json::Value>;
