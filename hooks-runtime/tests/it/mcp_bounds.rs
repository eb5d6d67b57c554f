//! H3-H5: what an MCP server gets from the runtime and what the runtime takes from it, against
//! hostile servers (`tests/mcp/hostile_server.py`, raw JSON-RPC over stdio, the system's
//! `python3` without packages): the environment a stdio server gets, results cut at their cap
//! with a note, tool lists capped in pages and tools, names a provider rejects left out, a
//! message over the line cap failing its call at once, and a server that failed to start not
//! started again at every turn. Feature `mcp-tests`, with the MCP suite (`.ci/run`).

#![cfg(all(feature = "mcp-tests", feature = "declarative", feature = "sqlite", target_os = "linux"))]

use crate::declarative_support::Logs;
use crate::support_mcp::scratch;

use std::path::Path;
use std::time::Duration;

use hooks_runtime::mcp::{DEFAULT_MCP_MAX_RESULT_BYTES, DEFAULT_MCP_MAX_TOOLS, MCP_INHERITED_ENV, McpTransport};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::ThreadStatus;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::Value;

define_prompt! { name: h4_prompt, model: "scripted", prompt: "Use the tools.", tools: ["mcp__hostile__*"] }
define_agent! { name: h4_agent, side_a: { prompt: h4_prompt, stop_on_response: true, max_steps: 4 } }

/// The interpreter `python3` runs, by its own path: a launcher on `PATH` (pyenv's shim, say)
/// would add variables of its own to the server's environment.
fn python() -> &'static str {
    static PYTHON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        let output = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 on PATH runs");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    })
}

fn hostile(args: &[&str]) -> McpTransport {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/hostile_server.py");
    McpTransport::stdio(python()).arg(script).args(args)
}

fn one_call(tool: &str) -> ScriptedModel {
    ScriptedModel::new([ScriptedResponse::tool_call("call_1", tool, "{}"), ScriptedResponse::text("Done.")])
}

/// Runs one turn; the stored result of `call_1` (content, status).
async fn call_once(runtime: &Runtime) -> (String, String) {
    let thread = runtime.create_thread("h4_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    let messages = thread.messages().await.unwrap();
    let result = messages.iter().find(|message| message.tool_call_id.as_deref() == Some("call_1")).expect("call_1");
    (result.content.clone().unwrap_or_default(), result.extra["tool_status"].as_str().unwrap_or_default().to_owned())
}

fn hostile_runtime(model: &ScriptedModel, transport: McpTransport) -> Runtime {
    Runtime::builder()
        .model("scripted", model.clone())
        .agent::<h4_agent>()
        .mcp_server("hostile", transport)
        .build()
        .unwrap()
}

fn offered(model: &ScriptedModel) -> Vec<String> {
    model.requests()[0].tools.iter().map(|tool| tool.name.clone()).collect()
}

#[tokio::test]
async fn h3_a_stdio_server_gets_the_sdks_default_environment_and_what_its_entry_lists() {
    // Cargo sets it for this test process: a variable of the runtime no server asked for.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let model = one_call("mcp__hostile__env");
    let runtime =
        hostile_runtime(&model, hostile(&["env"]).env("GIVEN_TOKEN", "for-this-server").inherit_env("CARGO_PKG_NAME"));
    let (text, status) = call_once(&runtime).await;
    assert_eq!(status, "success", "{text}");
    let env: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(env["GIVEN_TOKEN"], "for-this-server");
    assert_eq!(env["CARGO_PKG_NAME"], "hooks-runtime", "inherit_env passes one of the runtime's");
    assert_eq!(env["PATH"].as_str(), std::env::var("PATH").ok().as_deref());
    assert!(!env.contains_key("CARGO_MANIFEST_DIR"), "{env:?}");
    // What the shells and Python on the way add themselves: the working directory, the shell
    // level, the command's path, and Python's locale coercion (PEP 538).
    let added_on_the_way = ["PWD", "OLDPWD", "SHLVL", "_", "LC_CTYPE"];
    for key in env.keys() {
        assert!(
            MCP_INHERITED_ENV.contains(&key.as_str())
                || ["GIVEN_TOKEN", "CARGO_PKG_NAME"].contains(&key.as_str())
                || added_on_the_way.contains(&key.as_str()),
            "the server got `{key}`: {env:?}"
        );
    }
}

#[tokio::test]
async fn h4_a_result_over_the_cap_is_cut_with_a_note_the_model_reads() {
    let model = one_call("mcp__hostile__big");
    let runtime = hostile_runtime(&model, hostile(&["big-result", "300000"]));
    let (text, status) = call_once(&runtime).await;
    assert_eq!(status, "success");
    assert!(text.starts_with(&"b".repeat(DEFAULT_MCP_MAX_RESULT_BYTES)), "the first 100,000 bytes");
    assert!(!text.contains(&"b".repeat(DEFAULT_MCP_MAX_RESULT_BYTES + 1)));
    assert!(text.contains("it was 300000 bytes, and only the first 100000 are shown"), "{}", &text[100_000..]);
    // The model read the cut text, not the whole.
    let second = &model.requests()[1];
    let sent = second.messages.iter().find(|message| message.tool_call_id.as_deref() == Some("call_1")).unwrap();
    assert!(sent.content.as_deref().unwrap().len() < DEFAULT_MCP_MAX_RESULT_BYTES + 500);

    let model = one_call("mcp__hostile__big");
    let runtime = hostile_runtime(&model, hostile(&["big-result", "3000"]).max_result_bytes(1000));
    let (text, _) = call_once(&runtime).await;
    assert!(text.contains("it was 3000 bytes, and only the first 1000 are shown"), "configurable per server: {text}");
}

#[tokio::test]
async fn h4_tool_names_a_provider_rejects_are_left_out_with_a_warn_naming_them() {
    let (logs, _guard) = Logs::capture_filtered("hooks_runtime::mcp=warn");
    let model = ScriptedModel::new([ScriptedResponse::text("Nothing to do.")]);
    let runtime = hostile_runtime(&model, hostile(&["bad-names"]));
    let thread = runtime.create_thread("h4_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    assert_eq!(offered(&model), ["mcp__hostile__ok_tool"]);
    let logs = logs.text();
    for shown in ["\"mcp__hostile__two words\"", "\"mcp__hostile__<b>bold</b>\"", "\"mcp__hostile__esc\\u{1b}[31mred\""]
    {
        assert!(logs.contains(shown), "`{shown}` in {logs}");
    }
    assert!(logs.contains("(322 bytes)"), "the long name, cut and measured: {logs}");
    assert!(logs.contains("\"mcp__hostile__\"") && logs.contains("its tool name is empty"), "{logs}");
    assert!(!logs.contains('\u{1b}'), "no raw escape reaches the log");
}

#[tokio::test]
async fn h4_a_tool_list_is_capped_at_max_tools() {
    let model = ScriptedModel::new([ScriptedResponse::text("Nothing to do.")]);
    let runtime = hostile_runtime(&model, hostile(&["many-tools", "10000"]));
    let thread = runtime.create_thread("h4_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    assert_eq!(offered(&model).len(), DEFAULT_MCP_MAX_TOOLS);
}

#[tokio::test]
async fn h4_a_tool_list_paging_without_end_is_read_for_100_pages() {
    let markers = scratch("h4-pages");
    let model = ScriptedModel::new([ScriptedResponse::text("Nothing to do.")]);
    let runtime = hostile_runtime(&model, hostile(&["endless-pages"]).env("MCP_MARKER_DIR", &markers).max_tools(1000));
    let thread = runtime.create_thread("h4_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    assert_eq!(offered(&model).len(), 100, "one tool a page, 100 pages");
    let lists = std::fs::read_to_string(markers.join("lists")).unwrap();
    assert_eq!(lists.lines().count(), 100, "no page asked for after the 100th");
}

#[tokio::test]
async fn h4_a_message_over_the_line_cap_fails_its_call_at_once() {
    let model = one_call("mcp__hostile__huge");
    // A timeout far past the test's run: the call fails on the message, not at the timeout.
    let transport = hostile(&["huge-line", "3000000"]).max_message_bytes(1 << 20).timeout(Duration::from_secs(600));
    let runtime = hostile_runtime(&model, transport);
    let (text, status) = call_once(&runtime).await;
    assert_eq!(status, "error");
    assert!(text.contains("over the cap of 1048576 bytes on one message"), "{text}");
    assert!(!text.contains("did not answer within"), "{text}");
}

#[tokio::test]
async fn h5_a_server_that_failed_to_start_fails_calls_at_once_until_its_backoff_elapses() {
    let markers = scratch("h5-starts");
    let starts = markers.join("starts");
    let script = format!("echo started >> '{}'; echo 'config file missing' >&2; exit 3", starts.display());
    let backoff = Duration::from_secs(600);
    let transport = McpTransport::stdio("sh").args(["-c", &script]).start_backoff(backoff);
    let turn = || [ScriptedResponse::tool_call("call_1", "mcp__hostile__x", "{}"), ScriptedResponse::text("Done.")];
    let model = ScriptedModel::new(turn().into_iter().chain(turn()).chain(turn()));
    let runtime = hostile_runtime(&model, transport);
    let started = || std::fs::read_to_string(&starts).unwrap_or_default().lines().count();

    // The first turn starts it (the prompt offers its tools) and the start fails; its call
    // fails at once with the start's error.
    let (text, status) = call_once(&runtime).await;
    assert_eq!(status, "error");
    assert!(text.contains("config file missing") && text.contains("not started again for"), "{text}");
    assert_eq!(started(), 1);
    // The next turn: no start at all.
    let (text, _) = call_once(&runtime).await;
    assert!(text.contains("config file missing"), "{text}");
    assert_eq!(started(), 1, "not started again within the backoff");

    // The backoff elapses (tokio's clock, moved on): the next turn starts it again.
    tokio::time::pause();
    tokio::time::advance(backoff + Duration::from_secs(1)).await;
    tokio::time::resume();
    let (text, _) = call_once(&runtime).await;
    assert!(text.contains("config file missing"), "{text}");
    assert_eq!(started(), 2, "started again once the backoff elapsed");
}

#[tokio::test]
async fn h5_a_server_that_never_answers_initialize_costs_one_start_timeout_per_backoff() {
    let markers = scratch("h5-silent");
    let transport = hostile(&["silent"])
        .env("MCP_MARKER_DIR", &markers)
        .start_timeout(Duration::from_secs(1))
        .start_backoff(Duration::from_secs(600));
    let turn = || [ScriptedResponse::tool_call("call_1", "mcp__hostile__x", "{}"), ScriptedResponse::text("Done.")];
    let model = ScriptedModel::new(turn().into_iter().chain(turn()));
    let runtime = hostile_runtime(&model, transport);
    let started = || std::fs::read_to_string(markers.join("starts")).unwrap_or_default().lines().count();
    for _ in 0..2 {
        let (text, status) = call_once(&runtime).await;
        assert_eq!(status, "error");
        assert!(text.contains("did not start within 1s") && text.contains("not started again for"), "{text}");
    }
    assert_eq!(started(), 1, "two turns, one start: the second turn failed at once");
}
