//! The agent catalog: each agent's resolved hooks as `explain_json` gives them.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hooks_runtime::{AgentHandle, Runtime, explain_json};
use serde_json::Value;

use crate::auth::User;
use crate::config_error::ConfigError;
use crate::dto::catalog::{AgentList, AgentView};
use crate::error::{ApiError, printable};
use crate::state::AppState;

/// Every name of `catalog` is an agent of `runtime`, or the first that is not is an error.
pub(crate) fn check(runtime: &Runtime, catalog: &[String]) -> Result<(), ConfigError> {
    let Some(unknown) = catalog.iter().find(|name| runtime.agent(name).is_none()) else { return Ok(()) };
    let mut known: Vec<String> = runtime.agent_names().into_iter().map(str::to_owned).collect();
    known.sort_unstable();
    Err(ConfigError::UnknownCatalogAgent { name: unknown.clone(), known })
}

/// The agents the catalog lists: those of [`ServerConfig::catalog`](crate::ServerConfig::catalog)
/// that the runtime has, or every agent of the runtime when the list is empty.
pub(crate) fn agent_names(state: &AppState) -> Vec<&str> {
    if state.config.catalog.is_empty() {
        return state.runtime.agent_names();
    }
    // Every name is an agent of the runtime: `check` refused the router otherwise.
    let mut names: Vec<&str> = state.config.catalog.iter().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `GET /agents`: every agent's resolved hook table, by name.
pub(crate) async fn list(State(state): State<AppState>, _user: User) -> Response {
    let agents: Vec<AgentHandle> =
        agent_names(&state).into_iter().filter_map(|name| state.runtime.agent(name)).collect();
    Json(AgentList { agents: agents.iter().map(describe).collect() }).into_response()
}

/// `explain_json` of the agent, with `arguments`: the names of its prompts' `{{name}}`
/// placeholders, which `POST /threads` needs in its `arguments`.
fn describe(agent: &AgentHandle) -> AgentView<'_> {
    let def = agent.def();
    let mut arguments: Vec<&str> = Vec::new();
    for prompt in [def.side_a.prompt(), def.side_b.prompt()].into_iter().flatten() {
        for name in prompt.argument_names() {
            if !arguments.contains(&name) {
                arguments.push(name);
            }
        }
    }
    // `explain_json` is the runtime's own shape, an object: kept as it is.
    let explained = explain_json(agent.resolved());
    debug_assert!(matches!(explained, Value::Object(_)));
    AgentView { explained, arguments }
}

/// `GET /agents/{name}`.
pub(crate) async fn read(
    State(state): State<AppState>,
    _user: User,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let agent = state.runtime.agent(&name).ok_or_else(|| {
        ApiError::new(StatusCode::NOT_FOUND, "agent_not_found", format!("no agent named `{}`", printable(&name)))
    })?;
    Ok(Json(describe(&agent)).into_response())
}
