//! [`AgentHandle`]: one agent of a runtime, to attach a tool-call listener to or to explain.

use std::fmt;
use std::sync::Arc;

use hooks_core::{AgentDef, ResolvedAgent};

use crate::shared::agent_entry::AgentEntry;
use crate::tool::{ToolCallListener, ToolCallListenerTarget};

/// An agent of a [`Runtime`](crate::Runtime).
#[derive(Clone)]
pub struct AgentHandle {
    pub(crate) entry: Arc<AgentEntry>,
}

impl fmt::Debug for AgentHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentHandle").field("name", &self.entry.def.name).finish()
    }
}

impl AgentHandle {
    /// The resolved hook table.
    pub fn resolved(&self) -> &ResolvedAgent {
        &self.entry.resolved
    }

    /// The agent's definition.
    pub fn def(&self) -> &'static AgentDef {
        self.entry.def
    }
}

impl ToolCallListenerTarget for AgentHandle {
    fn agent_id(&self) -> &str {
        self.entry.def.name
    }

    fn set_tool_call_listener(&self, listener: Option<Arc<dyn ToolCallListener>>) {
        self.entry.set_listener(listener);
    }
}
