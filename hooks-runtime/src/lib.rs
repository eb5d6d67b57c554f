//! Agent lifecycle hooks for Rust, as the Standard Agents hooks specification defines them.
//!
//! Annotate a function with [`macro@hook`], reference it from a prompt or an agent, and the
//! runtime runs it exactly where the specification says.
//!
//! ```
//! use hooks_runtime::prelude::*;
//!
//! #[hook(filter_messages, id = "limit_to_20_messages")]
//! async fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
//!     let skip = messages.len().saturating_sub(20);
//!     messages.into_iter().skip(skip).collect()
//! }
//! ```

pub use hooks_core::*;
pub use hooks_macros::hook;

pub use async_trait::async_trait;

mod tool_listener;
pub use tool_listener::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

/// What a hook author needs: `use hooks_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::hook;
    pub use hooks_core::{
        Hook, HookError, HookExecutionContext, HookKind, HookMessage, HookResult, HookSource, HookToolCall,
        HookToolResult, LlmMessage, MessageRecord, MessageUpdate, Registry, Role, ThreadState, ToolCallRecord,
        ToolStatus, UserState,
    };
}

/// Not public API. Used by code that the macros generate; it may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use hooks_core::inventory;
    pub use hooks_core::{Hook, HookDef, HookFuture, HookHandler, HookLocation, PackageSignature, RegisteredHook};

    /// The signature traits the `#[hook]` adapters call through, one per kind and position.
    pub mod signature {
        #![allow(missing_docs, unreachable_pub)]
        use hooks_core::*;
        hooks_macros::__signature_traits!();
    }
}
