//! Composition: prompts, agents, parent-hook requirements, and their resolution into the hook
//! chains a thread runs.

mod agent;
mod explain;
mod hook_chain;
mod prompt;
mod resolve;
mod rules;

pub use agent::{Agent, AgentDef, ParentHookRequirement, ParentHookStage, Participant, SideDef, SubagentRelationship};
pub use explain::{explain, explain_json};
pub use hook_chain::{ChainedHook, HookChain};
pub use prompt::{Prompt, PromptDef};
pub use resolve::{ActiveContext, EnabledRelationships, ResolutionError, ResolvedAgent, ResolvedHook};
