//! The vocabulary of the agent hooks framework: hook kinds, the specification's data types,
//! hook definitions and the registry of linked hooks.
//!
//! Users depend on `hooks-runtime`, which re-exports everything here.

mod compose;
mod def;
mod error;
mod future;
mod kind;
mod linked;
mod registry;
mod state;
mod types;

pub use compose::{
    ActiveContext, Agent, AgentDef, EnabledRelationships, ParentHookRequirement, ParentHookStage, Participant, Prompt,
    PromptDef, ResolutionError, ResolvedAgent, ResolvedHook, SideDef, SubagentRelationship, explain, explain_json,
};
pub use def::{Hook, HookDef, HookHandler, HookLocation};
pub use error::{HookError, HookResult};
pub use future::{BoxedHookFuture, HookFuture};
pub use kind::{HookKind, HookRole, HookScope};
#[doc(hidden)]
pub use linked::register_linked;
pub use registry::{DuplicateHookId, Registry, RegistryError};
pub use state::{DetachedThread, MessageQuery, ThreadServices, ThreadState};
pub use types::*;
