//! The specification's data types, serialized to exactly the JSON the specification shows.

/// `Clone` written field by field, so that `clone_from` reuses every `String`'s buffer: a
/// by-value hook's snapshot (`Vec::clone_from` over these values) then copies bytes and
/// allocates nothing after a chain's first. The derived `Clone` would clone each field afresh.
macro_rules! clone_field_by_field {
    ($type:ident { $($field:ident),* $(,)? }) => {
        impl Clone for $type {
            fn clone(&self) -> Self {
                $type { $($field: self.$field.clone()),* }
            }

            fn clone_from(&mut self, source: &Self) {
                $(self.$field.clone_from(&source.$field);)*
            }
        }
    };
}

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
