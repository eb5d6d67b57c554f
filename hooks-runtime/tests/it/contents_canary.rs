//! H1: canary secrets sent through every path a run's contents take (a user message, tool
//! arguments, a tool result, a command hook's stdout and stderr, a settings hook's reason, an
//! MCP server's error, a provider's error body) appear in none of: everything the real OTLP
//! receiver got (`scripts/otlp_receiver.py`, its raw request bodies), the logs at the default
//! level (WARN), the files left in the temporary folder. With contents opted in, they appear
//! in the span attributes docs/observability.md names, and nowhere else on the spans.
//!
//! Needs feature `otel`, the receiver's Python (`.ci/run` makes `.venv/otlp`) and `python3`
//! for the MCP server; fails, never skips, without them.

#![cfg(all(feature = "otel", feature = "mcp", feature = "declarative", feature = "openai", target_os = "linux"))]

use crate::declarative_support::Logs;
use crate::openai_support::{self, status_reply};
use crate::otlp_support::Receiver;

use std::path::Path;

use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::mcp::McpTransport;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::otel::OtlpExporter;
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;

define_prompt! {
    name: h1_prompt,
    model: "scripted",
    prompt: "Look things up.",
    tools: ["lookup", "guarded", "mcp__leaky__*"],
}
define_agent! { name: h1_agent, side_a: { prompt: h1_prompt, stop_on_response: true, max_steps: 4 } }

define_prompt! { name: h1_provider_prompt, model: "failing-provider", prompt: "Answer." }
define_agent! { name: h1_provider_agent, side_a: { prompt: h1_provider_prompt, stop_on_response: true } }

/// The canary of one path: unique to this process, so nothing else can hold it.
fn canary(path: &str) -> String {
    format!("CANARY{}x{path}", std::process::id())
}

/// What every canary starts with.
fn canary_prefix() -> String {
    format!("CANARY{}x", std::process::id())
}

/// `text` for a shell command, between single quotes, whose canaries the command's own text
/// does not hold (`'CANA''RY...'` is `CANARY...` to the shell): the logs name a failed hook by
/// its command, which is configuration, not contents.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace("CANARY", "CANA''RY"))
}

fn settings() -> SettingsHooks {
    let (stdout, stderr, reason) = (canary("hookstdout"), canary("hookstderr"), canary("hookreason"));
    let deny = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason,
    }});
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "lookup", "hooks": [
            // stdout and stderr, and a non-blocking error.
            {"type": "command", "command": format!("echo {}; echo {} >&2; exit 1", quoted(&stdout), quoted(&stderr))},
            // stdout that is not the JSON it looks like.
            {"type": "command", "command": format!("echo {}", quoted(&format!("{{not json {stdout}")))},
        ]},
        {"matcher": "guarded", "hooks": [{"type": "command", "command": format!("echo {}", quoted(&deny.to_string()))}]},
    ]}});
    SettingsHooks::from_json_strict(&settings.to_string()).unwrap()
}

fn leaky_server() -> McpTransport {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    McpTransport::stdio("python3").arg(script).args(["error", &format!("password={}", canary("mcperror"))])
}

async fn runtime(contents: bool) -> (Runtime, tokio::task::JoinHandle<openai_support::Recorded>) {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "lookup", &json!({"q": canary("arguments")}).to_string())
            .then_tool_call("call_2", "guarded", "{}")
            .then_tool_call("call_3", "mcp__leaky__fail", "{}"),
        ScriptedResponse::text(&format!("The answer is {}.", canary("reply"))),
    ]);
    let lookup = FnTool::new("lookup", "Looks a word up.", |_| async { HookToolResult::success(canary("result")) });
    let guarded = FnTool::new("guarded", "Guarded.", |_| async { HookToolResult::success("ran") });
    let body = json!({"error": {"message": format!("db password {}", canary("provider")), "type": "server_error"}});
    let (base_url, served) =
        openai_support::serve(status_reply("500 Internal Server Error", "", &body.to_string())).await;
    let runtime = Runtime::builder()
        .agent::<h1_agent>()
        .agent::<h1_provider_agent>()
        .model("scripted", model)
        .model("failing-provider", openai_support::model(&base_url))
        .tool(lookup)
        .tool(guarded)
        .mcp_server("leaky", leaky_server())
        .settings_hooks(settings())
        .trace_contents(contents)
        .build()
        .unwrap();
    (runtime, served)
}

/// Runs both agents with the spans exported as `otel::install` exports them and the logs
/// printed at its default level (WARN); what the receiver got (spans, raw bodies) and the logs.
async fn canary_runs(contents: bool) -> (Vec<Value>, Vec<u8>, String) {
    let receiver = Receiver::start();
    let exporter = OtlpExporter::new(&receiver.endpoint).unwrap();
    let logs = Logs::default();
    let writer = logs.clone();
    let spans =
        Targets::new().with_target("hooks_runtime", LevelFilter::INFO).with_target("hooks_server", LevelFilter::INFO);
    let subscriber = tracing_subscriber::registry().with(exporter.layer().with_filter(spans)).with(
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .with_filter(tracing_subscriber::EnvFilter::new("warn")),
    );
    let guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();
    {
        let (runtime, served) = runtime(contents).await;
        let thread = runtime.create_thread("h1_agent", ThreadOptions::default()).await.unwrap();
        thread.send(&format!("Look up {}.", canary("user"))).await.unwrap();
        let messages = thread.messages().await.unwrap();
        let text = serde_json::to_string(&messages).unwrap();
        // Each path was taken: the canaries are where the thread keeps them.
        for path in ["user", "arguments", "result", "hookreason", "mcperror", "reply"] {
            assert!(text.contains(&canary(path)), "`{path}` not in the thread: {text}");
        }
        let failing = runtime.create_thread("h1_provider_agent", ThreadOptions::default()).await.unwrap();
        let _ = failing.send(&format!("Hello {}.", canary("user2"))).await;
        served.await.unwrap();
    }
    drop(guard);
    exporter.flush().unwrap();
    (receiver.spans(), receiver.raw(), logs.text())
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

/// Files under `dir` (two levels down) holding `needle`.
fn files_holding(dir: &Path, needle: &str, depth: usize) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        if metadata.is_dir() && depth > 0 {
            found.extend(files_holding(&path, needle, depth - 1));
        } else if metadata.is_file()
            && metadata.len() < (1 << 20)
            && std::fs::read(&path).is_ok_and(|bytes| contains(&bytes, needle))
        {
            found.push(path.display().to_string());
        }
    }
    found
}

#[tokio::test]
async fn h1_no_canary_leaves_through_otlp_logs_or_temporary_files_with_contents_off() {
    let (spans, raw, logs) = canary_runs(false).await;
    assert!(
        spans.iter().any(|span| span["name"] == "execute_tool mcp__leaky__fail"),
        "the runs were exported: {spans:#?}"
    );
    assert!(spans.iter().any(|span| span["name"] == "chat failing-provider"), "{spans:#?}");
    assert!(!raw.is_empty());
    let prefix = canary_prefix();
    assert!(!contains(&raw, &prefix), "a canary in what the OTLP receiver got: {spans:#?}");
    for span in &spans {
        assert_eq!(span["events"], json!([]), "no log event is exported: {span}");
    }
    assert!(!logs.contains(&prefix), "a canary in the logs at WARN:\n{logs}");
    assert!(logs.contains("WARN"), "the WARNs were captured (a hook failed, the provider failed): {logs}");
    let left = files_holding(&std::env::temp_dir(), &prefix, 2);
    assert!(left.is_empty(), "a canary in files left in the temporary folder: {left:?}");
}

#[tokio::test]
async fn h1_with_contents_opted_in_canaries_are_in_the_documented_attributes_only() {
    let (spans, _, _) = canary_runs(true).await;
    let documented =
        ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];
    let prefix = canary_prefix();
    let mut seen = std::collections::BTreeSet::new();
    for span in &spans {
        assert_eq!(span["events"], json!([]), "no log event is exported: {span}");
        for (key, value) in span["attributes"].as_object().unwrap() {
            if value.to_string().contains(&prefix) {
                assert!(documented.contains(&key.as_str()), "a canary in `{key}`: {span}");
                seen.insert(key.clone());
            }
        }
        let mut rest = span.clone();
        rest["attributes"] = json!({});
        assert!(!rest.to_string().contains(&prefix), "a canary outside the attributes: {span}");
    }
    assert_eq!(seen.len(), documented.len(), "each documented attribute carried one: {seen:?}");
}
