//! The handle every pipeline stage works through: the thread, its current agent's resolved
//! table, the active context and the enabled relationships, fixed for the operation.

use std::sync::Arc;

use hooks_core::__private::{ActiveContext, EnabledRelationships};
use hooks_core::{HookKind, ThreadState};

use super::ThreadShared;
use crate::dispatch::Dispatch;
use crate::shared::agent_entry::AgentEntry;

pub(crate) struct Pipeline<'t> {
    pub(crate) shared: &'t ThreadShared,
    pub(crate) agent: AgentHeld<'t>,
    pub(crate) active: ActiveContext,
    pub(crate) enabled: EnabledRelationships,
}

impl<'t> Pipeline<'t> {
    /// The pipeline for `state`: the side of its execution, or at rest without one.
    pub(crate) fn for_state(shared: &'t ThreadShared, state: &ThreadState) -> Self {
        Self::new(shared, AgentHeld::Held(shared.agent.current()), active_of(state))
    }

    /// [`for_state`](Self::for_state) with the agent a run read once: an agent changes only by a
    /// handoff, which ends the run's turns, so a run reads it at its start instead of at every
    /// step (a lock and two reference counts each time).
    pub(crate) fn for_run(shared: &'t ThreadShared, state: &ThreadState, agent: &'t AgentEntry) -> Self {
        Self::new(shared, AgentHeld::Lent(agent), active_of(state))
    }

    pub(crate) fn at_rest(shared: &'t ThreadShared) -> Self {
        Self::new(shared, AgentHeld::Held(shared.agent.current()), ActiveContext::AtRest)
    }

    /// The pipeline of `agent` for `active`, with the thread's enabled relationships.
    pub(crate) fn new(shared: &'t ThreadShared, agent: AgentHeld<'t>, active: ActiveContext) -> Self {
        Pipeline { shared, agent, active, enabled: shared.agent.enabled() }
    }

    /// The chain of `kind`, ready to run, or `None` when it has no hook: the call site skips an
    /// empty chain before building anything, so a hook point nobody uses costs a length check.
    #[inline]
    pub(crate) fn chain(&self, kind: HookKind) -> Option<Dispatch<'_>> {
        let chain = hooks_core::__private::chain(&self.agent.resolved, self.active, kind);
        (!chain.is_empty()).then(|| Dispatch {
            chain,
            plain: self.agent.plain.get(self.active, kind),
            enabled: self.enabled,
            default_timeout: self.shared.limits.hook_timeout,
        })
    }
}

/// The agent a pipeline works for: read from the thread for it, or lent by the run that read it.
pub(crate) enum AgentHeld<'t> {
    Held(Arc<AgentEntry>),
    Lent(&'t AgentEntry),
}

impl std::ops::Deref for AgentHeld<'_> {
    type Target = AgentEntry;

    fn deref(&self) -> &AgentEntry {
        match self {
            AgentHeld::Held(agent) => agent,
            AgentHeld::Lent(agent) => agent,
        }
    }
}

/// The side of `state`'s execution, or at rest without one.
fn active_of(state: &ThreadState) -> ActiveContext {
    match &state.execution {
        Some(execution) => ActiveContext::Side(execution.current_side),
        None => ActiveContext::AtRest,
    }
}
