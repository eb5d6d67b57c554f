//! A tool of an MCP server as a runtime [`Tool`]: `mcp__<server>__<tool>`, with the server's
//! description and input schema, called on the server within its timeout.

use std::sync::Weak;

use hooks_core::{HookToolResult, ThreadState};
use serde_json::Value;

use super::names::tool_name;
use crate::tool::{Tool, ToolCallContext, ToolProgress};

/// What calls a server's tools: the server (`server.rs`), held weakly by its tools.
#[async_trait::async_trait]
pub(super) trait CallTool: Send + Sync {
    /// Calls the server's tool `tool`; every failure is an error result.
    async fn call_tool(&self, tool: &str, arguments: Value, context: ToolCallContext<'_>) -> HookToolResult;
}

/// One tool of an MCP server.
pub(crate) struct McpTool {
    server: Weak<dyn CallTool>,
    name: String,
    server_tool: String,
    description: String,
    parameters: Value,
}

impl McpTool {
    /// A tool as the server listed it.
    pub(super) fn listed(server: Weak<dyn CallTool>, server_name: &str, tool: &rmcp::model::Tool) -> Self {
        McpTool {
            server,
            name: tool_name(server_name, &tool.name),
            server_tool: tool.name.to_string(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            parameters: Value::Object((*tool.input_schema).clone()),
        }
    }

    /// A tool known by name alone, before the server has listed its tools.
    pub(super) fn unlisted(server: Weak<dyn CallTool>, server_name: &str, tool: &str) -> Self {
        McpTool {
            server,
            name: tool_name(server_name, tool),
            server_tool: tool.to_owned(),
            description: String::new(),
            parameters: serde_json::json!({ "type": "object" }),
        }
    }

    pub(super) fn full_name(&self) -> &str {
        &self.name
    }

    pub(super) fn server_tool(&self) -> &str {
        &self.server_tool
    }

    pub(super) fn description_text(&self) -> &str {
        &self.description
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    async fn call(&self, state: &ThreadState, arguments: Value) -> HookToolResult {
        let ignore = |_: ToolProgress| {};
        self.call_with_context(ToolCallContext::new(state, "", &ignore), arguments).await
    }

    fn call_with_context<'a>(
        &'a self,
        context: ToolCallContext<'a>,
        arguments: Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = HookToolResult> + Send + 'a>> {
        Box::pin(async move {
            match self.server.upgrade() {
                Some(server) => server.call_tool(&self.server_tool, arguments, context).await,
                None => {
                    HookToolResult::error(format!("the MCP server of `{}` was dropped with its runtime", self.name))
                }
            }
        })
    }
}
