use crate::def::HookDef;
use crate::types::{PackageSignature, Side};

use super::prompt::PromptDef;

/// Who takes a side's turns.
#[derive(Debug)]
#[non_exhaustive]
pub enum Participant {
    /// A prompt run by a model.
    Prompt(&'static PromptDef),
    /// A person.
    Human,
}

/// When a child's required hook runs relative to the parent's own hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParentHookStage {
    /// Before the parent's prompt or agent hooks.
    BeforeParent,
    /// After them (the default).
    AfterParent,
}

impl ParentHookStage {
    /// `before_parent` or `after_parent`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ParentHookStage::BeforeParent => "before_parent",
            ParentHookStage::AfterParent => "after_parent",
        }
    }
}

/// One entry of a child agent's `parent_hooks`.
#[derive(Debug)]
pub struct ParentHookRequirement {
    /// The required hook, from the child's crate.
    pub hook: &'static HookDef,
    /// Why the child needs it, shown to whoever composes the child.
    pub reason: &'static str,
    /// When it runs.
    pub stage: ParentHookStage,
}

/// A subagent relationship declared on one side of a parent agent.
#[derive(Debug)]
pub struct SubagentRelationship {
    /// The child agent.
    pub agent: &'static AgentDef,
    /// The relationship's name: `as`, defaulting to the child agent's name.
    pub name: &'static str,
    /// An optional relationship contributes hooks only while enabled at run time.
    pub optional: bool,
    /// Hidden from the model; still contributes hooks.
    pub hidden: bool,
    /// How many child threads may exist at once.
    pub max_instances: Option<u32>,
}

/// One side of an agent.
#[derive(Debug)]
pub struct SideDef {
    /// Who takes the side's turns.
    pub participant: Participant,
    /// Whether the side's turn ends when the model sends a text reply.
    pub stop_on_response: bool,
    /// The most model steps in one turn.
    pub max_steps: Option<u32>,
    /// The side's subagent relationships, in declaration order.
    pub subagents: &'static [SubagentRelationship],
}

impl SideDef {
    /// The side's prompt, if a model takes its turns.
    pub const fn prompt(&self) -> Option<&'static PromptDef> {
        match self.participant {
            Participant::Prompt(prompt) => Some(prompt),
            Participant::Human => None,
        }
    }
}

/// An agent's static definition, produced by `define_agent!`.
#[derive(Debug)]
pub struct AgentDef {
    /// The agent's name.
    pub name: &'static str,
    /// The crate that defines the agent: the namespace of its parent-hook requirements.
    pub package: PackageSignature,
    /// Side A.
    pub side_a: SideDef,
    /// Side B.
    pub side_b: SideDef,
    /// Agent-level hooks: the fallback when the active prompt lists none, and at rest.
    pub hooks: &'static [&'static HookDef],
    /// Whether other agents may compose this one as a tool.
    pub expose_as_tool: bool,
    /// The description shown when offered as a tool.
    pub tool_description: Option<&'static str>,
    /// Hooks this agent requires on any parent that composes it.
    pub parent_hooks: &'static [ParentHookRequirement],
}

impl AgentDef {
    /// Every subagent relationship in resolution order: side A's in declaration order, then
    /// side B's (S6).
    pub fn relationships(&self) -> impl Iterator<Item = &SubagentRelationship> {
        self.side_a.subagents.iter().chain(self.side_b.subagents.iter())
    }

    /// The relationship named `name` (its `as`, or the child agent's name), on either side.
    pub fn relationship(&self, name: &str) -> Option<&SubagentRelationship> {
        self.relationships().find(|relationship| relationship.name == name)
    }

    /// One side.
    pub const fn side(&self, side: Side) -> &SideDef {
        match side {
            Side::A => &self.side_a,
            Side::B => &self.side_b,
        }
    }
}

/// Implemented by the item `define_agent!` emits, named by the agent's name.
pub trait Agent {
    /// The agent's definition.
    const DEF: &'static AgentDef;
}
