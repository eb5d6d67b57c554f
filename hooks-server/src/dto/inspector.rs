//! The inspector's own endpoints: `GET /inspect/status` and `GET /inspect/mcp`.

use serde::Serialize;
use serde_json::Value;

/// `GET /inspect/status`: whether hook runs are recorded.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InspectorStatus {
    pub(crate) hook_runs: HookRunsState,
}

/// What the page tells about hook runs.
#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum HookRunsState {
    Recording,
    NotConfigured,
    NoLayer,
}

/// `GET /inspect/mcp`: the runtime's MCP servers as it lists them (`null` without feature `mcp`).
#[derive(Debug, Serialize)]
pub(crate) struct McpServers {
    pub(crate) servers: Value,
}
