//! What a runtime was built with, by name: its agents, models and tools, and a settings file's
//! hooks. Fixed once the runtime is built (an MCP server's tool list aside, which the tool
//! registry follows). The authorizer of tool calls is a decider of the admission pipeline.

use foldhash::HashMap;
use std::sync::Arc;

use super::agent_entry::AgentEntry;
use super::tool_registry::ToolRegistry;
use crate::model::Model;

/// A runtime's agents, models and tools.
pub(crate) struct Registries {
    pub(crate) agents: HashMap<&'static str, Arc<AgentEntry>>,
    pub(crate) models: HashMap<String, Arc<dyn Model>>,
    pub(crate) tools: ToolRegistry,
    /// Hooks of a Claude Code-format settings file, for every thread (as the threads' `ThreadHooks`; its deciders are in the admission pipeline).
    #[cfg(feature = "declarative")]
    pub(crate) settings: Option<crate::declarative::SettingsHooks>,
}

impl Registries {
    /// The lifecycle hooks of a foreign hook format the threads fire, if any (a settings file's).
    pub(crate) fn thread_hooks(&self) -> Option<&dyn crate::thread_side::ThreadHooks> {
        #[cfg(feature = "declarative")]
        {
            self.settings.as_ref().map(|settings| settings as &dyn crate::thread_side::ThreadHooks)
        }
        #[cfg(not(feature = "declarative"))]
        {
            None
        }
    }
}
