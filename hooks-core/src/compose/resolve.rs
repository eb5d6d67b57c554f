//! Resolution (S1-S10): for each active context and hook kind, the ordered chain of hooks with
//! their provenance. Computed once per agent when the runtime starts; dispatch only indexes it.

use crate::def::HookDef;
use crate::kind::{HookHandler, HookKind};
use crate::registry::Registry;
use crate::types::{HookExecutionContext, Side};

use super::agent::{AgentDef, ParentHookRequirement, ParentHookStage, SubagentRelationship};
use super::prompt::PromptDef;

/// Where a thread is: running one side's turn (its prompt is active) or at rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActiveContext {
    /// During a turn of this side; the side's prompt, if any, is the active prompt.
    Side(Side),
    /// No execution is running (S9): the agent's hooks.
    AtRest,
}

impl ActiveContext {
    /// Every context, in the order of [`ActiveContext::slot`].
    pub const ALL: [ActiveContext; 3] =
        [ActiveContext::Side(Side::A), ActiveContext::Side(Side::B), ActiveContext::AtRest];

    /// The context's position in [`ActiveContext::ALL`].
    pub const fn slot(self) -> usize {
        match self {
            ActiveContext::Side(Side::A) => 0,
            ActiveContext::Side(Side::B) => 1,
            ActiveContext::AtRest => 2,
        }
    }
}

/// One resolved hook of a chain, with why it is there, and what dispatch reads before calling
/// it, copied out of its definition at resolution so that a call reads the entry alone.
#[derive(Debug, Clone)]
pub struct ResolvedHook {
    /// The adapter, copied from the definition.
    handler: HookHandler,
    /// A sync hook that is not `blocking`, does not move its value and belongs to no optional
    /// relationship: the chain calls it with no other test.
    plain: bool,
    /// The hook.
    pub hook: &'static HookDef,
    /// The provenance handed to the hook as its last argument (C3).
    pub context: HookExecutionContext,
    /// For a child's hook, the requirement (reason and stage) that brought it.
    pub requirement: Option<&'static ParentHookRequirement>,
    /// For a hook of an optional relationship, that relationship's slot in
    /// [`ResolvedAgent::optional_relationships`]: it runs only while the slot is enabled.
    pub optional_slot: Option<usize>,
}

impl ResolvedHook {
    /// The entry of `hook`, run with `context`.
    pub fn new(
        hook: &'static HookDef,
        context: HookExecutionContext,
        requirement: Option<&'static ParentHookRequirement>,
        optional_slot: Option<usize>,
    ) -> Self {
        let handler = hook.handler;
        let plain = !handler.is_async() && !hook.blocking && !hook.moves_value && optional_slot.is_none();
        ResolvedHook { handler, plain, hook, context, requirement, optional_slot }
    }

    /// The hook's adapter.
    #[inline(always)]
    pub fn handler(&self) -> &HookHandler {
        &self.handler
    }

    /// Whether the hook is a plain sync hook: not async, not `blocking`, not moving its value,
    /// and of no optional relationship.
    #[inline(always)]
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// Whether the hook runs under the given set of enabled optional relationships.
    #[inline]
    pub fn is_active(&self, enabled: &EnabledRelationships) -> bool {
        match self.optional_slot {
            None => true,
            Some(slot) => enabled.contains(slot),
        }
    }
}

/// The optional relationships enabled on a thread, as a bit set over
/// [`ResolvedAgent::optional_relationships`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnabledRelationships(u64);

impl EnabledRelationships {
    /// No optional relationship enabled.
    pub const NONE: EnabledRelationships = EnabledRelationships(0);

    /// The set whose bit `n` enables slot `n`.
    #[inline]
    pub const fn from_bits(bits: u64) -> Self {
        EnabledRelationships(bits)
    }

    /// Whether `slot` is enabled.
    #[inline]
    pub const fn contains(self, slot: usize) -> bool {
        slot < 64 && self.0 & (1 << slot) != 0
    }

    /// Enables or disables `slot`.
    pub fn set(&mut self, slot: usize, enabled: bool) {
        assert!(slot < 64, "at most 64 optional relationships per agent");
        if enabled {
            self.0 |= 1 << slot;
        } else {
            self.0 &= !(1 << slot);
        }
    }
}

/// Why an agent's hooks could not be resolved. The runtime refuses to start (S8): a parent never
/// runs with part of its children's hooks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolutionError {
    /// A requirement names a user-scope hook (D11, U2).
    #[error(
        "agent `{parent}`: child `{child}` requires `{hook}`, a user-scope hook, in its parent_hooks; \
         user-scope hooks run for every user without being composed: remove it from `parent_hooks`"
    )]
    UserScopeRequirement {
        /// The parent agent.
        parent: &'static str,
        /// The child agent that declared it.
        child: &'static str,
        /// The hook.
        hook: &'static str,
    },
    /// A listed or required hook is not linked into the binary's registry.
    #[error(
        "agent `{agent}`: hook `{hook}` referenced by {referenced_by} is not linked into this binary; \
         depend on the crate that defines it and reference the hook by its path (`that_crate::{hook}`)"
    )]
    UnregisteredHook {
        /// The agent being resolved.
        agent: &'static str,
        /// Where the reference was: `prompt x`, `agent x`, or `child x`.
        referenced_by: String,
        /// The hook.
        hook: &'static str,
    },
    /// A prompt or agent `hooks` list names a user-scope hook (D7, U2).
    #[error(
        "agent `{agent}`: {referenced_by} lists `{hook}`, a user-scope hook; user-scope hooks run without being listed: remove it from `hooks`"
    )]
    UserScopeHookListed {
        /// The agent being resolved.
        agent: &'static str,
        /// Where it is listed.
        referenced_by: String,
        /// The hook.
        hook: &'static str,
    },
    /// A definition built by hand breaks a rule the macros check at compile time (a name the
    /// model cannot call, 0 steps or child threads, a hook listed twice, ...).
    #[error("agent `{agent}`: {problem}")]
    InvalidDefinition {
        /// The agent.
        agent: &'static str,
        /// The rule broken, and how to fix it.
        problem: String,
    },
    /// More optional relationships than the 64 a thread can track.
    #[error(
        "agent `{agent}` declares more than 64 optional subagent relationships, the most a thread tracks; \
         make some of them required, or split the agent"
    )]
    TooManyOptionalRelationships {
        /// The agent.
        agent: &'static str,
    },
}

/// An agent's resolved hook table: per active context and kind, the ordered chain.
#[derive(Debug, Clone)]
pub struct ResolvedAgent {
    agent: &'static AgentDef,
    chains: Vec<Vec<ResolvedHook>>,
    optional: Vec<&'static SubagentRelationship>,
}

impl ResolvedAgent {
    /// Resolves every chain of `agent`, checking each hook against `registry`.
    pub fn resolve(agent: &'static AgentDef, registry: &Registry) -> Result<Self, ResolutionError> {
        if let Some(problem) = super::rules::broken_rule(agent) {
            return Err(ResolutionError::InvalidDefinition { agent: agent.name, problem });
        }
        let optional: Vec<&'static SubagentRelationship> =
            agent.relationships().filter(|relationship| relationship.optional).collect();
        if optional.len() > 64 {
            return Err(ResolutionError::TooManyOptionalRelationships { agent: agent.name });
        }
        let check = |hook: &'static HookDef, referenced_by: &dyn Fn() -> String| -> Result<(), ResolutionError> {
            let linked = registry.hooks().iter().any(|linked| linked.is_same_hook(hook));
            if !linked {
                return Err(ResolutionError::UnregisteredHook {
                    agent: agent.name,
                    referenced_by: referenced_by(),
                    hook: hook.id,
                });
            }
            Ok(())
        };
        let mut chains = Vec::with_capacity(ActiveContext::ALL.len() * HookKind::ALL.len());
        for active in ActiveContext::ALL {
            let (base, base_context) = base_hooks(agent, active);
            for &kind in HookKind::ALL {
                let mut chain = Vec::new();
                if kind.is_thread() && active != ActiveContext::AtRest {
                    push_children(agent, &optional, kind, ParentHookStage::BeforeParent, &mut chain, &check)?;
                }
                for hook in base {
                    if !hook.kind().is_thread() {
                        return Err(ResolutionError::UserScopeHookListed {
                            agent: agent.name,
                            referenced_by: describe(&base_context),
                            hook: hook.id,
                        });
                    }
                    check(hook, &|| describe(&base_context))?;
                    if hook.kind() == kind {
                        chain.push(ResolvedHook::new(hook, base_context.clone(), None, None));
                    }
                }
                if kind.is_thread() && active != ActiveContext::AtRest {
                    push_children(agent, &optional, kind, ParentHookStage::AfterParent, &mut chain, &check)?;
                }
                chains.push(chain);
            }
        }
        Ok(ResolvedAgent { agent, chains, optional })
    }

    /// The agent.
    pub fn agent(&self) -> &'static AgentDef {
        self.agent
    }

    /// The chain of `kind` in `active`, every optional hook included (filter with
    /// [`ResolvedHook::is_active`]). Reached through `__private::chain`.
    #[inline]
    pub(crate) fn chain(&self, active: ActiveContext, kind: HookKind) -> &[ResolvedHook] {
        &self.chains[active.slot() * HookKind::ALL.len() + kind.index()]
    }

    /// The optional relationships, by slot.
    pub fn optional_relationships(&self) -> &[&'static SubagentRelationship] {
        &self.optional
    }

    /// The slot of the optional relationship named `name` (its `as`, or the child's name).
    pub fn optional_slot(&self, name: &str) -> Option<usize> {
        self.optional.iter().position(|relationship| relationship.name == name)
    }

    /// The prompt that is active while `side` takes its turn: the side's prompt, or `None` when
    /// a person takes that side's turns. At rest no prompt is active.
    pub fn active_prompt(&self, side: Side) -> Option<&'static PromptDef> {
        self.agent.side(side).prompt()
    }

    /// The active prompt in `active`: [`ResolvedAgent::active_prompt`] of its side, none at rest.
    pub(crate) fn prompt_in(&self, active: ActiveContext) -> Option<&'static PromptDef> {
        match active {
            ActiveContext::Side(side) => self.active_prompt(side),
            ActiveContext::AtRest => None,
        }
    }
}

/// The parent's base set (S1, S3, S9): the active prompt's hooks if non-empty, else the agent's.
fn base_hooks(agent: &'static AgentDef, active: ActiveContext) -> (&'static [&'static HookDef], HookExecutionContext) {
    if let ActiveContext::Side(side) = active
        && let Some(prompt) = agent.side(side).prompt()
        && !prompt.hooks.is_empty()
    {
        return (prompt.hooks, HookExecutionContext::prompt(prompt.name));
    }
    (agent.hooks, HookExecutionContext::agent(agent.name))
}

/// Checks that a referenced hook is linked; the closure names the referrer for the error.
type LinkCheck<'a> = dyn Fn(&'static HookDef, &dyn Fn() -> String) -> Result<(), ResolutionError> + 'a;

/// The children's requirements of one stage and kind (S4-S7). Only direct relationships count.
fn push_children(
    agent: &'static AgentDef,
    optional: &[&'static SubagentRelationship],
    kind: HookKind,
    stage: ParentHookStage,
    chain: &mut Vec<ResolvedHook>,
    check: &LinkCheck<'_>,
) -> Result<(), ResolutionError> {
    for relationship in agent.relationships() {
        let child = relationship.agent;
        for requirement in child.parent_hooks {
            let hook = requirement.hook;
            if !hook.kind().is_thread() {
                return Err(ResolutionError::UserScopeRequirement {
                    parent: agent.name,
                    child: child.name,
                    hook: hook.id,
                });
            }
            check(hook, &|| format!("the parent_hooks of child `{}`", child.name))?;
            if requirement.stage != stage || hook.kind() != kind {
                continue;
            }
            let optional_slot = optional.iter().position(|candidate| std::ptr::eq(*candidate, relationship));
            let context = HookExecutionContext::child(relationship.name, child.name, hook.location.package.clone());
            chain.push(ResolvedHook::new(hook, context, Some(requirement), optional_slot));
        }
    }
    Ok(())
}

fn describe(context: &HookExecutionContext) -> String {
    match &context.source {
        crate::types::HookSource::Prompt { prompt_name } => format!("prompt `{prompt_name}`"),
        crate::types::HookSource::Agent { agent_name } => format!("agent `{agent_name}`"),
        crate::types::HookSource::Child { agent_name, .. } => format!("child `{agent_name}`"),
        crate::types::HookSource::Runtime => "the runtime's guards".to_owned(),
    }
}
