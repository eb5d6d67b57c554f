//! What a tool call costs over MCP's stdio against the same call of a local `FnTool`: the echo
//! tool of `@modelcontextprotocol/server-everything` (Node, a child process speaking JSON-RPC
//! over pipes) against an `FnTool` that echoes in-process.
//!
//! Two groups, each variant interleaved round by round with the other:
//! - the call alone, as a thread runs it (`Tool::call_with_context`; for MCP the request, the
//!   server's answer and the mapping of its content), on a server started before timing;
//! - a whole turn with one tool call (two scripted model steps, the tool, its result stored),
//!   the prompt offering the tool by name (the MCP variant offers the server's whole list, 13
//!   tools, with `mcp__everything__*`).
//!
//! Run it with `cargo bench -p hooks-runtime --bench mcp_call` after `.ci/mcp/install` (the
//! server is found under `HOOKS_MCP_SERVERS`, default `.ci/mcp`); 10 ms samples, 21 rounds
//! unless `BENCH_SAMPLE_MS` and `BENCH_ROUNDS` say otherwise.

#![allow(missing_docs)]

mod harness;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks_runtime::mcp::McpTransport;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::{FnTool, Tool, ToolCallContext, ToolProgress};
use hooks_runtime::{Runtime, ThreadOptions};

define_prompt! { name: local_prompt, model: "scripted", prompt: "Echo.", tools: ["echo"] }
define_agent! { name: local_agent, side_a: { prompt: local_prompt, stop_on_response: true } }
define_prompt! { name: mcp_prompt, model: "scripted", prompt: "Echo.", tools: ["mcp__everything__*"] }
define_agent! { name: mcp_agent, side_a: { prompt: mcp_prompt, stop_on_response: true } }

const LOCAL: &str = "echo";
const MCP: &str = "mcp__everything__echo";

fn everything() -> McpTransport {
    let dir = match std::env::var_os("HOOKS_MCP_SERVERS") {
        Some(dir) => std::path::PathBuf::from(dir),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/mcp"),
    };
    let js = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(js.exists(), "{} is missing: run `.ci/mcp/install` from the workspace root", js.display());
    McpTransport::stdio("node").arg(js).arg("stdio")
}

fn local_echo() -> FnTool {
    FnTool::new(LOCAL, "Echoes.", |arguments: serde_json::Value| async move {
        HookToolResult::success(format!("Echo: {}", arguments["message"].as_str().unwrap_or_default()))
    })
}

fn runtime(model: &ScriptedModel) -> Runtime {
    Runtime::builder()
        .agent::<local_agent>()
        .agent::<mcp_agent>()
        .model("scripted", model.clone())
        .tool(local_echo())
        .mcp_server("everything", everything())
        .build()
        .expect("the bench's agents resolve")
}

/// Times `n` calls of `tool`.
fn run_calls(tokio: &tokio::runtime::Runtime, tool: &Arc<dyn Tool>, n: u64) -> Duration {
    let state = ThreadState::detached("bench", "bench");
    let ignore = |_: ToolProgress| {};
    tokio.block_on(async {
        let started = Instant::now();
        for _ in 0..n {
            let context = ToolCallContext::new(&state, "call_1", &ignore);
            black_box(tool.call_with_context(context, serde_json::json!({"message": "hi"})).await);
        }
        started.elapsed()
    })
}

/// Times `n` turns of `agent`, each with one call of `tool`.
fn run_turns(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    model: &ScriptedModel,
    agent: &str,
    tool: &str,
    n: u64,
) -> Duration {
    tokio.block_on(async {
        let mut total = Duration::ZERO;
        for _ in 0..n {
            let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
            model.push_all([
                ScriptedResponse::tool_call("call_1", tool, r#"{"message":"hi"}"#),
                ScriptedResponse::text("Done."),
            ]);
            let started = Instant::now();
            let outcome = thread.send("Echo it.").await;
            total += started.elapsed();
            black_box(outcome.unwrap());
        }
        total
    })
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    harness::set_defaults(10, 21);
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let model = ScriptedModel::default();
    let runtime = runtime(&model);
    let local = hooks_runtime::__bench::tool(&runtime, LOCAL).unwrap();
    let mcp = hooks_runtime::__bench::tool(&runtime, MCP).unwrap();
    // Started, listed, and both answers checked, before any timing.
    let state = ThreadState::detached("bench", "bench");
    tokio.block_on(async {
        for tool in [&local, &mcp] {
            let result = tool.call(&state, serde_json::json!({"message": "hi"})).await;
            assert_eq!(result.result.as_deref(), Some("Echo: hi"), "{result:?}");
        }
    });
    let mcp = hooks_runtime::__bench::tool(&runtime, MCP).unwrap();

    println!("\nOne tool call: server-everything's echo over stdio against an in-process FnTool");
    let calls = harness::measure(
        "one call",
        vec![
            harness::Variant::new("FnTool", |n| run_calls(&tokio, &local, n)),
            harness::Variant::new("MCP stdio", |n| run_calls(&tokio, &mcp, n)),
        ],
    );
    println!("\nA turn with one tool call (scripted model, in-memory store)");
    let turns = harness::measure(
        "one turn",
        vec![
            harness::Variant::new("FnTool", |n| run_turns(&tokio, &runtime, &model, "local_agent", LOCAL, n)),
            harness::Variant::new("MCP stdio", |n| run_turns(&tokio, &runtime, &model, "mcp_agent", MCP, n)),
        ],
    );
    println!("\n| what | FnTool, us | MCP stdio, us | MCP / FnTool |");
    println!("|---|---:|---:|---:|");
    for (label, group) in [("the call alone", &calls), ("a turn with one call", &turns)] {
        println!(
            "| {label} | {:.1} | {:.1} | {:.0}x |",
            group.ns("FnTool") / 1000.0,
            group.ns("MCP stdio") / 1000.0,
            group.ratio("MCP stdio", "FnTool")
        );
    }
}
