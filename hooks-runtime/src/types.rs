//! The specification's data types, as a hook sees them: its parameters (messages, message
//! records and updates, tool calls and results, LLM messages, user events), its state
//! ([`ThreadState`], [`UserState`], with the execution they carry), its context
//! ([`HookExecutionContext`], with the [`HookSource`] that says why it runs), and its errors
//! ([`HookError`], [`HookResult`]). Each serializes to exactly the JSON the specification shows.
//!
//! The [`prelude`](crate::prelude) re-exports the ones a hook author writes most.
//!
//! ```
//! use hooks_runtime::types::{HookExecutionContext, HookSource, MessageRecord, Role};
//!
//! let record = MessageRecord::new(Role::User, "Where is my order?");
//! assert_eq!(record.content.as_deref(), Some("Where is my order?"));
//!
//! let context = HookExecutionContext::prompt("support_prompt");
//! assert!(matches!(context.source, HookSource::Prompt { .. }));
//! ```

pub use hooks_core::{
    AbortSignal, Attachment, AttachmentRef, ExecutionState, ExtraFields, HookError, HookExecutionContext, HookMessage,
    HookResult, HookSource, HookToolCall, HookToolResult, LlmMessage, MessageQuery, MessageRecord, MessageUpdate,
    PackageSignature, Role, Side, ThreadServices, ThreadState, ToolAttachment, ToolCallFunction, ToolCallRecord,
    ToolCallType, ToolDecision, ToolStatus, UserEvent, UserState,
};
