//! The runtime's tools by name: those added with `RuntimeBuilder::tool`, and those of its MCP
//! servers (`mcp__<server>__<tool>`), which a server's tool list can change while the runtime
//! runs (P5).

use foldhash::HashMap;
use std::sync::Arc;

use crate::tool::Tool;

/// Every tool of a runtime, found by name.
pub(crate) struct ToolRegistry {
    fixed: HashMap<String, Arc<dyn Tool>>,
    #[cfg(feature = "mcp")]
    pub(crate) mcp: crate::mcp::McpServers,
}

impl ToolRegistry {
    pub(crate) fn new(
        fixed: HashMap<String, Arc<dyn Tool>>,
        #[cfg(feature = "mcp")] mcp: crate::mcp::McpServers,
    ) -> Self {
        ToolRegistry {
            fixed,
            #[cfg(feature = "mcp")]
            mcp,
        }
    }

    /// The tool named `name`: an added tool, or a tool of an MCP server (one its last listing
    /// has, or any name of a server that has not listed its tools yet: the server decides).
    pub(crate) fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.fixed.get(name) {
            return Some(tool.clone());
        }
        #[cfg(feature = "mcp")]
        if let Some(tool) = self.mcp.tool(name) {
            return Some(tool);
        }
        None
    }

    /// Whether there is a tool named `name` ([`ToolRegistry::get`]).
    pub(crate) fn contains_key(&self, name: &str) -> bool {
        self.fixed.contains_key(name) || {
            #[cfg(feature = "mcp")]
            {
                self.mcp.tool(name).is_some()
            }
            #[cfg(not(feature = "mcp"))]
            {
                false
            }
        }
    }
}
