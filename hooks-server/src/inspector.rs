//! `GET /inspect`: one static page that shows each agent's resolved hooks (from the catalog),
//! a thread's messages, its live events and the tool calls that wait for approval, with controls
//! to decide them. It holds no data itself and needs no token to load; everything it shows it
//! fetches with the token the viewer enters, like any other client.

use axum::Json;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use serde_json::Value;

use crate::auth::User;
use crate::dto::inspector::{HookRunsState, InspectorStatus, McpServers};
use crate::state::AppState;

/// The page: HTML and its script in one file, no build step.
const PAGE: &str = include_str!("inspector.html");

/// What the page may do: run its own inline script and style, and talk to this origin only.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
     connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub(crate) async fn page() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
}

/// `GET /inspect/status`: whether hook runs are recorded, so that the page can say exactly what
/// is missing when they are not: `{"hookRuns": "recording" | "not_configured" | "no_layer"}`.
pub(crate) async fn status(State(state): State<AppState>, User(_): User) -> Json<InspectorStatus> {
    let hook_runs = match &state.config.hook_runs {
        None => HookRunsState::NotConfigured,
        Some(runs) if !runs.is_layered() => HookRunsState::NoLayer,
        Some(_) => HookRunsState::Recording,
    };
    Json(InspectorStatus { hook_runs })
}

/// `GET /inspect/mcp`: the runtime's MCP servers, each with its state, last error and tools as
/// it last listed them: `{"servers": [{"name", "transport", "pins", "state", "error", "starts",
/// "tools": [{"name", "description"}]}]}` (`pins`: `null`, or `{"withheld": [{"name", "reason"}]}`
/// for a trusted project's server whose tools are pinned); `null` for a server built without the
/// `mcp` feature.
pub(crate) async fn mcp(State(state): State<AppState>, User(_): User) -> Json<McpServers> {
    #[cfg(feature = "mcp")]
    let servers = serde_json::to_value(state.runtime.mcp_servers()).unwrap_or(Value::Null);
    #[cfg(not(feature = "mcp"))]
    let servers = {
        let _ = state;
        Value::Null
    };
    Json(McpServers { servers })
}
