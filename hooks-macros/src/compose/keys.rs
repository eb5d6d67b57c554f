//! The keys of `define_prompt!` and `define_agent!`, each spelled once (serde's `Symbol`): the
//! readers and the lists of known keys in `FIELDS` name these constants, and a test checks that
//! every listed key is read.

pub(super) const AGENT: &str = "agent";
pub(super) const AS: &str = "as";
pub(super) const CRATE: &str = "crate";
pub(super) const EXPOSE_AS_TOOL: &str = "expose_as_tool";
pub(super) const HIDDEN: &str = "hidden";
pub(super) const HOOK: &str = "hook";
pub(super) const HOOKS: &str = "hooks";
pub(super) const HUMAN: &str = "human";
pub(super) const INCLUDE_CHAT: &str = "include_chat";
pub(super) const INCLUDE_PAST_TOOLS: &str = "include_past_tools";
pub(super) const MAX_INSTANCES: &str = "max_instances";
pub(super) const MAX_STEPS: &str = "max_steps";
pub(super) const MODEL: &str = "model";
pub(super) const NAME: &str = "name";
pub(super) const OPTIONAL: &str = "optional";
pub(super) const PARENT_HOOKS: &str = "parent_hooks";
pub(super) const PROMPT: &str = "prompt";
pub(super) const REASON: &str = "reason";
pub(super) const SIDE_A: &str = "side_a";
pub(super) const SIDE_B: &str = "side_b";
pub(super) const STAGE: &str = "stage";
pub(super) const STOP_ON_RESPONSE: &str = "stop_on_response";
pub(super) const SUBAGENTS: &str = "subagents";
pub(super) const TOOL_DESCRIPTION: &str = "tool_description";
pub(super) const TOOLS: &str = "tools";
