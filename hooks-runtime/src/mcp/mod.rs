//! Tools from MCP servers (P1-P5), on the official Rust SDK (`rmcp`).
//!
//! [`RuntimeBuilder::mcp_server`](crate::RuntimeBuilder::mcp_server) adds a server reached by
//! an [`McpTransport`]: a child process over stdio, or streamable HTTP. Each tool the server
//! lists becomes a runtime tool named `mcp__<server>__<tool>` with the server's description and
//! input schema, the name Claude Code's hooks match MCP tools by. Its calls go through every
//! hook, guard, settings-file matcher and approval as any tool's do (P2).
//!
//! # Offering a server's tools to a prompt
//!
//! A prompt lists them in its `tools` like any tool, one by one (`"mcp__github__get_issue"`),
//! or all at once with the server's wildcard, `"mcp__<server>__*"`:
//!
//! ```
//! use hooks_runtime::prelude::*;
//!
//! define_prompt! {
//!     name: triage_prompt,
//!     model: "scripted",
//!     prompt: "Triage the issue.",
//!     // Every tool the `github` server lists, as it lists them now and after a change,
//!     // and one tool of the `files` server.
//!     tools: ["mcp__github__*", "mcp__files__read_text_file"],
//! }
//! # fn main() {}
//! ```
//!
//! The wildcard is the form to choose for a server whose tools are all meant for the prompt:
//! a server decides its tool list at run time and may change it while it runs
//! (`notifications/tools/list_changed`, P5), so a list written in the code goes stale, and the
//! wildcard follows the server. A name of its own is the form for picking some of a server's
//! tools. Both are checked at build: the server must have been added (the tool names are the
//! server's to know, and are checked when it lists them; a listed name it lacks is not offered).
//! Only the whole-server wildcard exists (no `mcp__github__get_*`), so a prompt's reach is
//! read from its list at a glance.
//!
//! # Failures
//!
//! A server is started at its first need: the first prompt that offers its tools, or the first
//! call. A server that cannot start, exits, hangs up or answers with an error gives the call an
//! error result that says so (P3); a lost server is started again on the next call, after a
//! backoff that doubles with each failure in a row (from 200 ms up to 10 s). A call ends at its
//! server's [`McpTransport::timeout`] (a start, at its [`McpTransport::start_timeout`]); the call is then cancelled on the server with
//! `notifications/cancelled`, as it is when the run is aborted (P4). Everything waits on tokio,
//! so no runtime worker is blocked. A stdio server's process group is killed when the runtime
//! is dropped, and by a watchdog in the group once the runtime's process is gone, even by
//! `SIGKILL`.
//!
//! # Results and progress
//!
//! Text parts are the result's text (the error's, when the server sets `isError`); images,
//! audio and embedded binary resources are new attachments; resource links are attachment
//! references whose path is the link's URI. A server's progress notifications for a call are
//! `tool_call_progress` events on the thread's event stream, with the call's id
//! ([`ToolCallContext::report_progress`](crate::tool::ToolCallContext::report_progress)).

mod handler;
mod result;
mod server;
mod tool;
mod transport;

use std::sync::Arc;

pub use server::{McpServerInfo, McpServerState, McpToolInfo};
pub use transport::{DEFAULT_MCP_CALL_TIMEOUT, DEFAULT_MCP_START_TIMEOUT, McpTransport};

use server::McpServer;

/// The prefix of every MCP tool's name: `mcp__<server>__<tool>`.
pub const MCP_TOOL_PREFIX: &str = "mcp__";

/// The runtime name of the tool `tool` of the server `server`.
pub(crate) fn tool_name(server: &str, tool: &str) -> String {
    format!("{MCP_TOOL_PREFIX}{server}__{tool}")
}

/// `(server, tool)` of a name `mcp__<server>__<tool>`; a server's name has no `__`, so the
/// first `__` after the prefix ends it. The tool `*` is the server's wildcard.
pub(crate) fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(MCP_TOOL_PREFIX)?.split_once("__")
}

/// Why `name` cannot name an MCP server: it must be non-empty ASCII letters, digits, `-` and
/// `_`, without `__` (which ends the server's part of a tool name) or a `_` at either end.
pub(crate) fn check_server_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if !name.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_') {
        return Err("it may hold ASCII letters, digits, `-` and `_` only");
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Err(
            "`__` separates it from the tool's name in `mcp__<server>__<tool>`, so it may not hold `__` or begin or end with `_`",
        );
    }
    Ok(())
}

/// The runtime's MCP servers, in the order they were added.
#[derive(Default)]
pub(crate) struct McpServers {
    servers: Vec<Arc<McpServer>>,
}

impl McpServers {
    pub(crate) fn new(servers: Vec<(String, McpTransport)>) -> Self {
        McpServers { servers: servers.into_iter().map(|(name, transport)| McpServer::new(name, transport)).collect() }
    }

    fn server(&self, name: &str) -> Option<&Arc<McpServer>> {
        self.servers.iter().find(|server| server.name == name)
    }

    /// Whether a server of this name was added.
    pub(crate) fn has_server(&self, name: &str) -> bool {
        self.server(name).is_some()
    }

    /// The tool named `mcp__<server>__<tool>`, if its server was added and has (or has not yet
    /// listed) that tool.
    pub(crate) fn tool(&self, name: &str) -> Option<Arc<dyn crate::tool::Tool>> {
        let (server, tool) = split_tool_name(name)?;
        if tool == "*" {
            return None;
        }
        Some(self.server(server)?.tool(tool)? as Arc<dyn crate::tool::Tool>)
    }

    /// The tools a prompt's `tools` entry offers, if it names an MCP server's tool or its
    /// wildcard; `None` for any other entry.
    pub(crate) async fn offered(&self, entry: &str) -> Option<Vec<Arc<dyn crate::tool::Tool>>> {
        let (server, tool) = split_tool_name(entry)?;
        let server = self.server(server)?;
        let tools = server.offered_tools().await;
        Some(
            tools
                .into_iter()
                .filter(|offered| tool == "*" || offered.server_tool() == tool)
                .map(|offered| offered as Arc<dyn crate::tool::Tool>)
                .collect(),
        )
    }

    /// Every server as the inspector shows it.
    pub(crate) fn infos(&self) -> Vec<McpServerInfo> {
        self.servers.iter().map(|server| server.info()).collect()
    }

    /// The servers' wildcards, `mcp__<server>__*`, which a settings matcher for MCP tools
    /// matches (for the build's warning about matchers that name no tool).
    #[cfg(feature = "declarative")]
    pub(crate) fn wildcards(&self) -> Vec<String> {
        self.servers.iter().map(|server| tool_name(&server.name, "*")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_split_at_the_first_double_underscore_after_the_prefix() {
        assert_eq!(split_tool_name("mcp__github__get_issue"), Some(("github", "get_issue")));
        assert_eq!(split_tool_name("mcp__fs__read__all"), Some(("fs", "read__all")));
        assert_eq!(split_tool_name("mcp__fs__*"), Some(("fs", "*")));
        assert_eq!(split_tool_name("get_issue"), None);
        assert_eq!(tool_name("my-server", "echo"), "mcp__my-server__echo");
    }

    #[test]
    fn a_server_name_has_no_double_underscore() {
        assert!(check_server_name("github").is_ok());
        assert!(check_server_name("my_server-2").is_ok());
        assert!(check_server_name("my__server").is_err());
        assert!(check_server_name("_x").is_err());
        assert!(check_server_name("").is_err());
        assert!(check_server_name("a.b").is_err());
    }
}
