//! What a runtime was built with, by name: its agents, models and tools, the authorizer of tool
//! calls and a settings file's hooks. Fixed once the runtime is built (an MCP server's tool list
//! aside, which the tool registry follows).

use std::collections::HashMap;
use std::sync::Arc;

use super::agent_entry::AgentEntry;
use super::tool_registry::ToolRegistry;
use crate::model::Model;
use crate::tool::ToolAuthorizer;

/// A runtime's agents, models and tools.
pub(crate) struct Registries {
    pub(crate) agents: HashMap<&'static str, Arc<AgentEntry>>,
    pub(crate) models: HashMap<String, Arc<dyn Model>>,
    pub(crate) tools: ToolRegistry,
    pub(crate) authorizer: Option<Arc<ToolAuthorizer>>,
    /// Hooks of a Claude Code-format settings file, for every thread (`thread::settings_hooks`).
    #[cfg(feature = "declarative")]
    pub(crate) settings: Option<crate::declarative::SettingsHooks>,
}
