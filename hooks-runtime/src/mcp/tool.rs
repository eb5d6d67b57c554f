//! A tool of an MCP server as a runtime [`Tool`](crate::tool::Tool): an [`FnTool`] named
//! `mcp__<server>__<tool>`, with the server's description and input schema, whose calls go to
//! the server within its timeout.

use std::sync::{Arc, Weak};

use hooks_core::HookToolResult;
use serde_json::Value;

use super::names::tool_name;
use crate::tool::{FnTool, ToolCallContext};

/// What calls a server's tools: the server (`server.rs`), held weakly by its tools.
#[async_trait::async_trait]
pub(super) trait CallTool: Send + Sync {
    /// Calls the server's tool `tool`; every failure is an error result.
    async fn call_tool(&self, tool: &str, arguments: Value, context: ToolCallContext<'_>) -> HookToolResult;
}

/// A tool as the server listed it.
pub(super) fn listed_tool(server: Weak<dyn CallTool>, server_name: &str, tool: &rmcp::model::Tool) -> FnTool {
    let description = tool.description.as_deref().unwrap_or_default();
    on_server(server, server_name, &tool.name, description).with_parameters(Value::Object((*tool.input_schema).clone()))
}

/// A tool known by name alone, before the server has listed its tools: no description, and
/// [`FnTool`]'s schema of any object.
pub(super) fn unlisted_tool(server: Weak<dyn CallTool>, server_name: &str, tool: &str) -> FnTool {
    on_server(server, server_name, tool, "")
}

/// The tool `server_tool` of the server, each call of which goes to the server while the
/// runtime that holds it lives.
fn on_server(server: Weak<dyn CallTool>, server_name: &str, server_tool: &str, description: &str) -> FnTool {
    let name = tool_name(server_name, server_tool);
    // Shared with each call's future, which owns what it reads.
    let (server_tool, full_name): (Arc<str>, Arc<str>) = (server_tool.into(), name.as_str().into());
    FnTool::with_context(name, description, move |context, arguments| {
        let (server, server_tool, full_name) = (server.clone(), server_tool.clone(), full_name.clone());
        Box::pin(async move {
            match server.upgrade() {
                Some(server) => server.call_tool(&server_tool, arguments, context).await,
                None => HookToolResult::error(format!("the MCP server of `{full_name}` was dropped with its runtime")),
            }
        })
    })
}
