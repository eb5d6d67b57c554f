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
///
/// `define_agent!` builds it from the agent's `parent_hooks` list; [`new`](Self::new) builds one
/// by hand.
#[derive(Debug)]
#[non_exhaustive]
pub struct ParentHookRequirement {
    /// The required hook, from the child's crate.
    pub hook: &'static HookDef,
    /// Why the child needs it, shown to whoever composes the child.
    pub reason: &'static str,
    /// When it runs.
    pub stage: ParentHookStage,
}

impl ParentHookRequirement {
    /// A requirement that `hook` run on the parent at `stage`, for `reason`.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::definition::{ParentHookRequirement, ParentHookStage};
    ///
    /// #[hook(filter_messages, id = "requirement_last_20")]
    /// fn last_20(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    ///     keep_last_messages(messages, 20);
    /// }
    ///
    /// static REQUIREMENT: ParentHookRequirement = ParentHookRequirement::new(
    ///     <requirement_last_20 as Hook>::DEF,
    ///     "the child reads only recent messages",
    ///     ParentHookStage::AfterParent,
    /// );
    /// assert_eq!(REQUIREMENT.hook.id, "requirement_last_20");
    /// ```
    pub const fn new(hook: &'static HookDef, reason: &'static str, stage: ParentHookStage) -> Self {
        ParentHookRequirement { hook, reason, stage }
    }
}

/// A subagent relationship declared on one side of a parent agent.
///
/// `define_agent!` builds it from a side's `subagents` list; [`new`](Self::new) and the `with_*`
/// methods build one by hand.
#[derive(Debug)]
#[non_exhaustive]
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

impl SubagentRelationship {
    /// A relationship named `name` to `agent`: required, visible to the model, with no limit on
    /// child threads.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::definition::SubagentRelationship;
    ///
    /// define_prompt! { name: relationship_child_prompt, model: "m", prompt: "Research." }
    /// define_agent! { name: relationship_child, side_a: { prompt: relationship_child_prompt } }
    ///
    /// static RESEARCH: SubagentRelationship = SubagentRelationship::new(<relationship_child as Agent>::DEF, "research")
    ///     .with_optional(true)
    ///     .with_max_instances(2);
    /// assert!(RESEARCH.optional && !RESEARCH.hidden);
    /// assert_eq!(RESEARCH.max_instances, Some(2));
    /// ```
    pub const fn new(agent: &'static AgentDef, name: &'static str) -> Self {
        SubagentRelationship { agent, name, optional: false, hidden: false, max_instances: None }
    }

    /// Makes the relationship optional: its hooks run only while it is enabled.
    #[must_use]
    pub const fn with_optional(mut self, optional: bool) -> Self {
        self.optional = optional;
        self
    }

    /// Hides the child from the model; its hooks still run.
    #[must_use]
    pub const fn with_hidden(mut self, hidden: bool) -> Self {
        self.hidden = hidden;
        self
    }

    /// At most `max_instances` child threads at once.
    #[must_use]
    pub const fn with_max_instances(mut self, max_instances: u32) -> Self {
        self.max_instances = Some(max_instances);
        self
    }
}

/// One side of an agent.
///
/// `define_agent!` builds it from `side_a` and `side_b`; [`new`](Self::new) and the `with_*`
/// methods build one by hand.
#[derive(Debug)]
#[non_exhaustive]
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
    /// A side whose turns `participant` takes: a turn goes on after a text reply, with no limit
    /// on its model steps, and the side has no subagents.
    ///
    /// ```
    /// use hooks_runtime::definition::{Participant, SideDef};
    ///
    /// static PERSON: SideDef = SideDef::new(Participant::Human).with_stop_on_response(true);
    /// assert!(PERSON.prompt().is_none() && PERSON.stop_on_response);
    /// assert_eq!(PERSON.max_steps, None);
    /// ```
    pub const fn new(participant: Participant) -> Self {
        SideDef { participant, stop_on_response: false, max_steps: None, subagents: &[] }
    }

    /// Ends the side's turn when the model sends a text reply.
    #[must_use]
    pub const fn with_stop_on_response(mut self, stop_on_response: bool) -> Self {
        self.stop_on_response = stop_on_response;
        self
    }

    /// At most `max_steps` model steps in one turn.
    #[must_use]
    pub const fn with_max_steps(mut self, max_steps: u32) -> Self {
        self.max_steps = Some(max_steps);
        self
    }

    /// The side's subagent relationships, in declaration order.
    #[must_use]
    pub const fn with_subagents(mut self, subagents: &'static [SubagentRelationship]) -> Self {
        self.subagents = subagents;
        self
    }

    /// The side's prompt, if a model takes its turns.
    pub const fn prompt(&self) -> Option<&'static PromptDef> {
        match self.participant {
            Participant::Prompt(prompt) => Some(prompt),
            Participant::Human => None,
        }
    }
}

/// An agent's static definition, produced by `define_agent!`; [`new`](Self::new) and the
/// `with_*` methods build one by hand.
#[derive(Debug)]
#[non_exhaustive]
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
    /// Agent `name` of crate `package` with two sides: no agent-level hooks, offered as a tool
    /// with no description of its own, and no requirements on a parent.
    ///
    /// ```
    /// use hooks_runtime::definition::{AgentDef, Participant, SideDef};
    /// use hooks_runtime::types::PackageSignature;
    ///
    /// static TWO_PEOPLE: AgentDef = AgentDef::new(
    ///     "two_people",
    ///     PackageSignature::new_static("my_crate", "0.1.0"),
    ///     SideDef::new(Participant::Human),
    ///     SideDef::new(Participant::Human),
    /// )
    /// .with_tool_description("Two people talking");
    /// assert_eq!(TWO_PEOPLE.name, "two_people");
    /// assert!(TWO_PEOPLE.hooks.is_empty() && TWO_PEOPLE.expose_as_tool);
    /// ```
    pub const fn new(name: &'static str, package: PackageSignature, side_a: SideDef, side_b: SideDef) -> Self {
        AgentDef {
            name,
            package,
            side_a,
            side_b,
            hooks: &[],
            expose_as_tool: true,
            tool_description: None,
            parent_hooks: &[],
        }
    }

    /// The agent-level hooks, in order.
    #[must_use]
    pub const fn with_hooks(mut self, hooks: &'static [&'static HookDef]) -> Self {
        self.hooks = hooks;
        self
    }

    /// Whether other agents may compose this one as a tool.
    #[must_use]
    pub const fn with_expose_as_tool(mut self, expose_as_tool: bool) -> Self {
        self.expose_as_tool = expose_as_tool;
        self
    }

    /// The description shown when the agent is offered as a tool.
    #[must_use]
    pub const fn with_tool_description(mut self, tool_description: &'static str) -> Self {
        self.tool_description = Some(tool_description);
        self
    }

    /// The hooks this agent requires on any parent that composes it.
    #[must_use]
    pub const fn with_parent_hooks(mut self, parent_hooks: &'static [ParentHookRequirement]) -> Self {
        self.parent_hooks = parent_hooks;
        self
    }

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
