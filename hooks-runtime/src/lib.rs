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

pub use runtime::{AgentHandle, BuildError, DEFAULT_HOOK_TIMEOUT, Runtime, RuntimeBuilder, ToolAuthorizer};
pub use thread::{RunOutcome, RuntimeError, Thread, ThreadEvent, ThreadOptions};
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
