//! Which agent owns a thread now, and which of its optional relationships are enabled: read on
//! every pipeline, written by a handoff (the agent) or by `Thread::set_relationship_enabled`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use hooks_core::__private::EnabledRelationships;

use crate::shared::agent_entry::AgentEntry;

pub(crate) struct ActiveAgent {
    agent: RwLock<Arc<AgentEntry>>,
    /// One bit per optional relationship slot of the agent.
    enabled: AtomicU64,
}

impl ActiveAgent {
    /// `agent` owns the thread, with no optional relationship enabled.
    pub(crate) fn new(agent: Arc<AgentEntry>) -> Self {
        ActiveAgent { agent: RwLock::new(agent), enabled: AtomicU64::new(0) }
    }

    /// The agent that owns the thread now.
    pub(crate) fn current(&self) -> Arc<AgentEntry> {
        self.agent.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// A handoff: `agent` owns the thread from now on.
    pub(crate) fn hand_off_to(&self, agent: Arc<AgentEntry>) {
        *self.agent.write().unwrap_or_else(PoisonError::into_inner) = agent;
    }

    pub(crate) fn enabled(&self) -> EnabledRelationships {
        EnabledRelationships::from_bits(self.enabled.load(Ordering::Acquire))
    }

    /// Enables or disables the optional relationship in `slot`.
    pub(crate) fn set_enabled(&self, slot: usize, enabled: bool) {
        if enabled {
            self.enabled.fetch_or(1 << slot, Ordering::AcqRel);
        } else {
            self.enabled.fetch_and(!(1 << slot), Ordering::AcqRel);
        }
    }
}
