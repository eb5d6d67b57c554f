//! Definitions as the macros build them, to read: a hook's [`HookDef`] (its id, [`HookKind`],
//! [`HookLocation`], timeout and [`OnFailure`]), a prompt's [`PromptDef`], an agent's
//! [`AgentDef`] with its sides ([`SideDef`], [`Participant`]), subagent relationships and
//! parent-hook requirements; the traits the macros implement ([`Hook`], [`GuardHook`],
//! [`Prompt`], [`Agent`]); and the limits every hook runs under ([`DEFAULT_HOOK_TIMEOUT`], [`MAX_HOOK_DEPTH`]).
//!
//! ```
//! use std::time::Duration;
//!
//! use hooks_runtime::prelude::*;
//! use hooks_runtime::definition::DEFAULT_HOOK_TIMEOUT;
//!
//! #[hook(filter_messages, id = "last_20_messages")]
//! fn last_20(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
//!     keep_last_messages(messages, 20);
//! }
//!
//! let def = <last_20_messages as Hook>::DEF;
//! assert_eq!(def.id, "last_20_messages");
//! assert_eq!(def.kind(), HookKind::FilterMessages);
//! // No `timeout_ms`: the runtime's default applies.
//! assert_eq!(def.timeout_ms.map_or(DEFAULT_HOOK_TIMEOUT, Duration::from_millis), Duration::from_secs(10));
//! ```

pub use hooks_core::{
    Agent, AgentDef, GuardHook, Hook, HookDef, HookKind, HookLocation, HookRole, HookScope, OnFailure,
    ParentHookRequirement, ParentHookStage, Participant, Prompt, PromptDef, SideDef, SubagentRelationship,
};

pub use crate::limits::{DEFAULT_HOOK_TIMEOUT, MAX_HOOK_DEPTH};
