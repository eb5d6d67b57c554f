//! Serves a demo runtime over HTTP: one agent with a scripted model that looks something up and
//! answers, a tool with a progress argument, and a hook of each user-scope kind.
//!
//! ```text
//! cargo run -p hooks-server --example serve -- 127.0.0.1:8080
//! curl -s -H 'Authorization: Bearer dev-token' -d '{"agent":"demo_agent"}' http://127.0.0.1:8080/threads
//! curl -sN -H 'Authorization: Bearer dev-token' http://127.0.0.1:8080/threads/<id>/events &
//! curl -s -H 'Authorization: Bearer dev-token' -d '{"content":"Weather in Paris?"}' http://127.0.0.1:8080/threads/<id>/messages
//! ```
//!
//! The tokens are `dev-token` (user `dev`) and `dev-token-2` (user `dev2`); set
//! `HOOKS_SERVER_TOKEN` to use another token for `dev`.

use std::time::Duration;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::{HookRuns, ServerConfig, StaticTokens};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

#[hook(tool_call_started, id = "announce_lookup")]
fn announce_lookup(_state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    tracing::info!(tool = %call.function.name, progress = progress.unwrap_or(""), "tool call started");
}

#[hook(user_client_attached, id = "log_attached")]
fn log_attached(user: &UserState) {
    tracing::info!(user = %user.user_id, clients = user.clients.len(), "client attached");
}

#[hook(user_client_detached, id = "log_detached")]
fn log_detached(user: &UserState) {
    tracing::info!(user = %user.user_id, clients = user.clients.len(), "client detached");
}

#[hook(user_value_changed, id = "log_value_changed")]
fn log_value_changed(user: &UserState) {
    tracing::info!(user = %user.user_id, "user value changed");
}

define_prompt! {
    name: demo_prompt,
    model: "scripted",
    prompt: "Answer questions; look things up first.",
    tools: ["lookup"],
    hooks: [announce_lookup],
}

define_agent! {
    name: demo_agent,
    side_a: { prompt: demo_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The hook-run layer sees every hook span; the log prints INFO and up.
    let runs = HookRuns::new();
    tracing_subscriber::registry()
        .with(runs.layer())
        .with(tracing_subscriber::fmt::layer().with_filter(EnvFilter::new("info")))
        .init();
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    // Enough scripted turns for a long demo: a lookup, then an answer, each time.
    let script = (0..1000).flat_map(|turn| {
        [
            ScriptedResponse::tool_call(
                &format!("call_{turn}"),
                "lookup",
                r#"{"query":"Looking up the forecast","place":"Paris"}"#,
            ),
            ScriptedResponse::text("It will be sunny all day."),
        ]
    });
    let runtime = Runtime::builder()
        .agent::<demo_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(
            FnTool::new("lookup", "Looks something up.", |_args| async {
                tokio::time::sleep(Duration::from_millis(400)).await;
                HookToolResult::success("Sunny, 24°C.")
            })
            .with_progress_argument("query"),
        )
        .build()?;
    let token = std::env::var("HOOKS_SERVER_TOKEN").unwrap_or_else(|_| "dev-token".to_owned());
    let auth = StaticTokens::new([(token, "dev".to_owned()), ("dev-token-2".to_owned(), "dev2".to_owned())]);
    let config = ServerConfig::default().catalog(vec!["demo_agent".to_owned()]).hook_runs(Some(runs));
    // The runs a stopped server left unsettled, and the inputs it had accepted, run now rather
    // than at the first request (building the router starts nothing).
    runtime.recover().await?;
    let app = hooks_server::router_with(runtime, auth, config)?;
    let listener = tokio::net::TcpListener::bind(&address).await?;
    tracing::info!("serving on http://{0}; the inspector is at http://{0}/inspect", listener.local_addr()?);
    // Headers within 10 s, silent connections closed after 60 s, at most 512 connections.
    hooks_server::HttpServer::new(app).serve(listener).await?;
    Ok(())
}
