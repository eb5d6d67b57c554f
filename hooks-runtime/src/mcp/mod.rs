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
mod lines;
mod names;
mod pins;
mod result;
mod server;
mod tool;
mod transport;

use std::sync::Arc;

use crate::tool::Tool;

pub use server::{McpServerInfo, McpServerState, McpToolInfo};
pub use transport::{
    DEFAULT_MCP_CALL_TIMEOUT, DEFAULT_MCP_MAX_MESSAGE_BYTES, DEFAULT_MCP_MAX_RESULT_BYTES, DEFAULT_MCP_MAX_TOOLS,
    DEFAULT_MCP_START_BACKOFF, DEFAULT_MCP_START_TIMEOUT, MCP_INHERITED_ENV, McpTransport,
};

pub use names::MCP_TOOL_PREFIX;
pub(crate) use names::{check_server_name, split_tool_name};
/// A project's `.mcp.json` servers are discovered by the declarative settings loader.
#[cfg(feature = "declarative")]
pub(crate) use pins::PinRecord;
pub(crate) use pins::ToolPins;
pub use pins::{MCP_TOOL_WITHHELD_EVENT, McpPinState, McpWithheldTool};
#[cfg(feature = "otel")]
pub(crate) use transport::blocking_http_client;

use server::McpServer;

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
    pub(crate) fn tool(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let (server, tool) = split_tool_name(name)?;
        if tool == "*" {
            return None;
        }
        Some(self.server(server)?.tool(tool)? as Arc<dyn Tool>)
    }

    /// The tools a prompt's `tools` entry offers, if it names an MCP server's tool or its
    /// wildcard; `None` for any other entry.
    pub(crate) async fn offered(&self, entry: &str) -> Option<Vec<Arc<dyn Tool>>> {
        let (server, tool) = split_tool_name(entry)?;
        let server = self.server(server)?;
        let tools = server.offered_tools().await;
        Some(
            tools
                .into_iter()
                .map(|offered| offered as Arc<dyn Tool>)
                .filter(|offered| tool == "*" || offered.name() == entry)
                .collect(),
        )
    }

    /// F6: checks the listings of the server `name` against `pins` from its first start on.
    pub(crate) fn pin(&self, name: &str, pins: Arc<ToolPins>) {
        if let Some(server) = self.server(name) {
            let _ = server.pins.set(pins);
        }
    }

    /// The tools a prompt's `tools` entry would offer that its server's pins withheld at its
    /// last listing: `(mcp__<server>__<tool>, why)`.
    pub(crate) fn withheld(&self, entry: &str) -> Vec<(String, String)> {
        let Some((server, tool)) = split_tool_name(entry) else { return Vec::new() };
        let Some(pins) = self.server(server).and_then(|server| server.pins.get()) else { return Vec::new() };
        pins.withheld().into_iter().filter(|(name, _)| tool == "*" || name == entry).collect()
    }

    /// Closes every server's connection and waits until each client has ended
    /// ([`Runtime::shutdown`](crate::Runtime::shutdown)).
    pub(crate) async fn close(&self) {
        futures_util::future::join_all(self.servers.iter().map(|server| server.close())).await;
    }

    /// Every server as the inspector shows it.
    pub(crate) fn infos(&self) -> Vec<McpServerInfo> {
        self.servers.iter().map(|server| server.info()).collect()
    }

    /// The servers' wildcards, `mcp__<server>__*`, which a settings matcher for MCP tools
    /// matches (for the build's warning about matchers that name no tool).
    #[cfg(feature = "declarative")]
    pub(crate) fn wildcards(&self) -> Vec<String> {
        self.servers.iter().map(|server| names::tool_name(&server.name, "*")).collect()
    }
}
