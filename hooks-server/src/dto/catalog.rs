//! The agent catalog: `GET /agents` and `GET /agents/{name}`.

use serde::Serialize;
use serde_json::Value;

/// One agent: its `explain_json` (the runtime's shape, kept as it gives it) and `arguments`,
/// the names of its prompts' `{{name}}` placeholders.
#[derive(Debug, Serialize)]
pub(crate) struct AgentView<'a> {
    #[serde(flatten)]
    pub(crate) explained: Value,
    pub(crate) arguments: Vec<&'a str>,
}

/// `GET /agents`.
#[derive(Debug, Serialize)]
pub(crate) struct AgentList<'a> {
    pub(crate) agents: Vec<AgentView<'a>>,
}
