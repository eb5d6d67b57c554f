//! [`McpServerSpec`]: an MCP server of a project's `.mcp.json`, as discovery read it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use super::trust::TrustStore;

/// An MCP server of a project's `.mcp.json`: a command run over stdio, or a URL.
///
/// ```
/// use hooks_runtime::declarative::{Discovery, McpServerSpec};
///
/// let root = std::env::temp_dir().join(format!("doc-mcp-spec-{}", std::process::id()));
/// std::fs::create_dir_all(&root).unwrap();
/// std::fs::write(root.join(".mcp.json"), r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "server-filesystem", "."]}}}"#).unwrap();
/// let scan = Discovery::new(&root).home_dir(root.join("home")).managed_settings(root.join("none")).scan();
/// let server: &McpServerSpec = &scan.files[0].mcp_servers[0];
/// assert_eq!(server.to_string(), "npx -y server-filesystem .");
/// # std::fs::remove_dir_all(&root).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpServerSpec {
    /// The server's name, the `<server>` of its tools' `mcp__<server>__<tool>`.
    pub name: String,
    /// A stdio server's command.
    pub command: Option<String>,
    /// A stdio server's arguments.
    pub args: Vec<String>,
    /// A stdio server's environment variables.
    pub env: BTreeMap<String, String>,
    /// An HTTP server's URL.
    pub url: Option<String>,
    /// An HTTP server's headers.
    pub headers: BTreeMap<String, String>,
    /// The folder a stdio server runs in: the project's.
    pub cwd: PathBuf,
    /// The trust file its tools are pinned in (F6).
    pub(super) trust: Option<TrustStore>,
}

impl McpServerSpec {
    /// F6: where its tools are pinned: the trust file's record of its project.
    #[cfg(feature = "mcp")]
    pub(crate) fn tool_pins(&self) -> Option<crate::mcp::ToolPins> {
        let store = self.trust.clone()?;
        let record = super::trust::TrustFilePins { store, project: self.cwd.clone(), server: self.name.clone() };
        Some(crate::mcp::ToolPins::new(Box::new(record)))
    }
}

impl fmt::Display for McpServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.command, &self.url) {
            (Some(command), _) => {
                f.write_str(command)?;
                for arg in &self.args {
                    write!(f, " {arg}")?;
                }
                Ok(())
            }
            (None, Some(url)) => f.write_str(url),
            (None, None) => f.write_str("(nothing to run)"),
        }
    }
}
