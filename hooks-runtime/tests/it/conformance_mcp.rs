//! Tools from MCP servers (P1-P5), against real servers that other people wrote:
//! `@modelcontextprotocol/server-everything` (stdio and streamable HTTP),
//! `@modelcontextprotocol/server-filesystem` (stdio), and a fastmcp server for the failure cases
//! (`tests/mcp/failing_server.py`). `.ci/mcp/install` installs them; a test whose server is
//! missing fails and says how to install it.
//!
//! Behind the test feature `mcp-tests`, so that `cargo test --workspace` needs only the Rust
//! toolchain: `cargo test -p hooks-runtime --features mcp-tests --test runtime_it --
//! conformance_mcp::` after `.ci/mcp/install` (`.ci/run` runs it).

#![cfg(all(feature = "mcp-tests", feature = "declarative", feature = "sqlite", target_os = "linux"))]

use crate::support_mcp;
use crate::support_processes::processes_with_arg;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::mcp::{McpServerState, McpTransport};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{BuildError, Runtime, RuntimeBuilder, ThreadEvent, ThreadOptions};
use serde_json::{Value, json};
use support_mcp::{EverythingHttp, eventually, everything, failing, filesystem, scratch};

const SETTLE: Duration = Duration::from_secs(30);

fn builder(model: &ScriptedModel) -> RuntimeBuilder {
    Runtime::builder().model("scripted", model.clone())
}

fn one_call(tool: &str, arguments: Value) -> ScriptedModel {
    ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", tool, &arguments.to_string()),
        ScriptedResponse::text("Done."),
    ])
}

/// The stored result of `call_1`.
async fn result_of(thread: &hooks_runtime::Thread) -> HookMessage {
    let messages = thread.messages().await.unwrap();
    messages.into_iter().find(|message| message.tool_call_id.as_deref() == Some("call_1")).expect("a result for call_1")
}

fn status_of(message: &HookMessage) -> &str {
    message.extra["tool_status"].as_str().unwrap_or_default()
}

async fn run(runtime: &Runtime, agent: &str) -> (hooks_runtime::Thread, HookMessage) {
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    let result = result_of(&thread).await;
    (thread, result)
}

// ---------------------------------------------------------------------------------------------
// P1: each server tool is `mcp__<server>__<tool>` with the server's schema, over stdio and HTTP.

define_prompt! { name: p1_all_prompt, model: "scripted", prompt: "Use the tools.", tools: ["mcp__everything__*"] }
define_agent! { name: p1_all_agent, side_a: { prompt: p1_all_prompt, stop_on_response: true } }

#[tokio::test]
async fn p1_a_stdio_servers_tools_are_offered_as_mcp_server_tool_with_its_schema_and_run() {
    let model = one_call("mcp__everything__get-sum", json!({"a": 2, "b": 40}));
    let runtime = builder(&model).agent::<p1_all_agent>().mcp_server("everything", everything()).build().unwrap();
    assert_eq!(runtime.mcp_servers()[0].state, McpServerState::NotStarted, "started at its first need");
    let (_, result) = run(&runtime, "p1_all_agent").await;
    assert_eq!(status_of(&result), "success", "{result:?}");
    assert!(result.content.as_deref().unwrap().contains("42"), "{:?}", result.content);
    let offered = &model.requests()[0].tools;
    let sum = offered.iter().find(|tool| tool.name == "mcp__everything__get-sum").expect("get-sum is offered");
    assert_eq!(sum.parameters["properties"]["a"]["type"], "number", "the server's input schema: {}", sum.parameters);
    assert!(!sum.description.is_empty());
    assert!(offered.iter().all(|tool| tool.name.starts_with("mcp__everything__")));
    assert!(offered.len() >= 10, "the wildcard offers every tool the server lists: {}", offered.len());
    let info = &runtime.mcp_servers()[0];
    assert_eq!((info.state, info.transport, info.starts), (McpServerState::Ready, "stdio", 1));
    assert_eq!(info.tools.len(), offered.len());
}

#[tokio::test]
async fn p1_a_streamable_http_servers_tools_run_too() {
    let server = EverythingHttp::start().await;
    let model = one_call("mcp__everything__echo", json!({"message": "over HTTP"}));
    let runtime = builder(&model)
        .agent::<p1_all_agent>()
        .mcp_server("everything", McpTransport::http(&server.url).header("X-Test", "p1"))
        .build()
        .unwrap();
    let (_, result) = run(&runtime, "p1_all_agent").await;
    assert_eq!(status_of(&result), "success", "{result:?}");
    assert_eq!(result.content.as_deref(), Some("Echo: over HTTP"));
    assert_eq!(runtime.mcp_servers()[0].transport, "http");
    assert!(server.pid().is_some());
}

define_prompt! {
    name: p1_named_prompt, model: "scripted", prompt: "Read.",
    tools: ["mcp__files__read_text_file", "mcp__files__list_directory"],
}
define_agent! { name: p1_named_agent, side_a: { prompt: p1_named_prompt, stop_on_response: true } }

#[tokio::test]
async fn p1_a_prompt_offers_the_tools_it_names_alone() {
    let root = scratch("p1-files");
    std::fs::write(root.join("notes.txt"), "the filesystem server read this").unwrap();
    let root = root.canonicalize().unwrap();
    let model = one_call("mcp__files__read_text_file", json!({"path": root.join("notes.txt")}));
    let runtime = builder(&model).agent::<p1_named_agent>().mcp_server("files", filesystem(&root)).build().unwrap();
    let (_, result) = run(&runtime, "p1_named_agent").await;
    assert_eq!(result.content.as_deref(), Some("the filesystem server read this"), "{result:?}");
    let mut offered: Vec<String> = model.requests()[0].tools.iter().map(|tool| tool.name.clone()).collect();
    offered.sort();
    assert_eq!(offered, ["mcp__files__list_directory", "mcp__files__read_text_file"]);
    assert!(runtime.mcp_servers()[0].tools.len() > 2, "the server has more tools than the prompt offers");
}

define_prompt! { name: p1_unknown_prompt, model: "scripted", prompt: "x", tools: ["mcp__github__*"] }
define_agent! { name: p1_unknown_agent, side_a: { prompt: p1_unknown_prompt } }

#[test]
fn p1_a_prompt_naming_a_server_that_was_not_added_fails_the_build() {
    let model = ScriptedModel::new([]);
    let error = builder(&model).agent::<p1_unknown_agent>().mcp_server("files", everything()).build().unwrap_err();
    assert!(matches!(&error, BuildError::UnknownMcpServer { server, .. } if server == "github"), "{error}");
    assert!(error.to_string().contains(".mcp_server(\"github\", ...)"), "{error}");
    let error = builder(&model).mcp_server("my__server", everything()).build().unwrap_err();
    assert!(matches!(error, BuildError::McpServerName { .. }), "{error}");
    let error = builder(&model).mcp_server("a", everything()).mcp_server("a", everything()).build().unwrap_err();
    assert!(error.to_string().contains("added before"), "{error}");
}

// ---------------------------------------------------------------------------------------------
// P2: hooks, guards, settings matchers and approvals govern MCP calls; results map.

static P2_GUARDED: AtomicUsize = AtomicUsize::new(0);
static P2_DONE: AtomicUsize = AtomicUsize::new(0);

#[hook(before_tool_call, id = "p2_no_env", on_failure = deny)]
fn p2_no_env(_state: &ThreadState, call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    P2_GUARDED.fetch_add(1, Ordering::SeqCst);
    if call.function.name == "mcp__everything__get-env" {
        return ToolDecision::deny("the environment is private");
    }
    if call.function.name == "mcp__everything__echo" {
        arguments["message"] = json!(format!("{} (checked)", arguments["message"].as_str().unwrap_or_default()));
    }
    ToolDecision::allow()
}

#[hook(tool_call_done, id = "p2_done")]
fn p2_done(_state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) {
    assert!(call.function.name.starts_with("mcp__everything__"));
    P2_DONE.fetch_add(1, Ordering::SeqCst);
}

define_prompt! { name: p2_prompt, model: "scripted", prompt: "x", tools: ["mcp__everything__*"], hooks: [p2_done] }
define_agent! { name: p2_agent, side_a: { prompt: p2_prompt, stop_on_response: true } }

#[tokio::test]
async fn p2_guards_hooks_and_settings_matchers_govern_mcp_calls() {
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "mcp__.*", "hooks": [{"type": "command",
        "command": "if grep -q get-sum; then echo 'sums are done by hand' >&2; exit 2; fi"}]}]}});
    let registry = SettingsHooks::from_json_strict(&settings.to_string()).unwrap();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "mcp__everything__echo", r#"{"message":"hi"}"#)
            .then_tool_call("call_2", "mcp__everything__get-env", "{}")
            .then_tool_call("call_3", "mcp__everything__get-sum", r#"{"a":1,"b":2}"#),
        ScriptedResponse::text("Done."),
    ]);
    let runtime = builder(&model)
        .agent::<p2_agent>()
        .mcp_server("everything", everything())
        .guard::<p2_no_env>()
        .settings_hooks(registry)
        .build()
        .unwrap();
    let thread = runtime.create_thread("p2_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    let messages = thread.messages().await.unwrap();
    let result = |id: &str| messages.iter().find(|m| m.tool_call_id.as_deref() == Some(id)).unwrap().clone();
    assert_eq!(result("call_1").content.as_deref(), Some("Echo: hi (checked)"), "the guard rewrote the arguments");
    let env = result("call_2");
    assert_eq!(env.extra["tool_denied"], true);
    assert!(env.content.as_deref().unwrap().contains("the environment is private"), "{env:?}");
    let sum = result("call_3");
    assert_eq!(sum.extra["tool_denied"], true, "the settings file's mcp__.* matcher denied it: {sum:?}");
    assert!(sum.content.as_deref().unwrap().contains("sums are done by hand"), "{sum:?}");
    assert_eq!(P2_GUARDED.load(Ordering::SeqCst), 2, "the settings hook denied call_3 before the guard");
    assert_eq!(P2_DONE.load(Ordering::SeqCst), 3, "tool_call_done ran for each call");
}

define_prompt! { name: p2_image_prompt, model: "scripted", prompt: "x", tools: ["mcp__everything__*"] }
define_agent! { name: p2_image_agent, side_a: { prompt: p2_image_prompt, stop_on_response: true } }

#[tokio::test]
async fn p2_images_and_resource_links_become_attachments() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "mcp__everything__get-tiny-image", "{}").then_tool_call(
            "call_2",
            "mcp__everything__get-resource-links",
            r#"{"count":2}"#,
        ),
        ScriptedResponse::text("Done."),
    ]);
    let runtime = builder(&model).agent::<p2_image_agent>().mcp_server("everything", everything()).build().unwrap();
    let thread = runtime.create_thread("p2_image_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    let messages = thread.messages().await.unwrap();
    let result = |id: &str| messages.iter().find(|m| m.tool_call_id.as_deref() == Some(id)).unwrap().clone();
    let image = result("call_1");
    let attachments = image.extra["attachments"].as_array().expect("the image is an attachment");
    assert_eq!(attachments[0]["mime_type"], "image/png");
    assert!(!attachments[0]["data"].as_str().unwrap().is_empty());
    let name = attachments[0]["name"].as_str().unwrap();
    assert!(image.content.as_deref().unwrap().contains(&format!("[image: {name}]")), "{image:?}");
    assert!(thread.file(&format!("/attachments/{name}")).is_some(), "M10: kept in the thread's files");
    let links = result("call_2");
    let refs = links.extra["attachments"].as_array().expect("links are attachment references");
    assert_eq!(refs.len(), 2);
    assert!(refs[0]["path"].as_str().unwrap().starts_with("demo://resource/"), "{refs:?}");
}

#[tokio::test]
async fn p2_is_error_is_an_error_result() {
    let markers = scratch("p2-error");
    let model = one_call("mcp__failing__fail", json!({"reason": "no such record"}));
    let runtime = builder(&model).agent::<p3_agent>().mcp_server("failing", failing(&markers)).build().unwrap();
    let (_, result) = run(&runtime, "p3_agent").await;
    assert_eq!(status_of(&result), "error");
    assert!(result.content.as_deref().unwrap().contains("no such record"), "{result:?}");
}

/// The calls the fastmcp server recorded.
fn records(markers: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(markers.join("records")).unwrap_or_default().lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn p2_an_mcp_call_waits_for_a_person_and_runs_once_after_its_runtime_is_gone() {
    let markers = scratch("p2-approval");
    let db = markers.join("threads.db");
    let ask = |runtime: RuntimeBuilder| {
        runtime.authorize_tools(|_state, call| {
            if call.function.name.starts_with("mcp__failing__record") {
                ToolDecision::ask("recording needs a person")
            } else {
                ToolDecision::allow()
            }
        })
    };
    let thread_id = {
        let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
        let model = one_call("mcp__failing__record", json!({"text": "approved once"}));
        let first = ask(builder(&model).agent::<p3_agent>().store(store).mcp_server("failing", failing(&markers)))
            .build()
            .unwrap();
        let thread = first.create_thread("p3_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.send("go").await.unwrap().status, ThreadStatus::AwaitingApproval);
        assert!(records(&markers).is_empty(), "it waits; nothing ran");
        thread.id().to_owned()
        // The runtime and its server are gone here, as after a crash.
    };
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let model = ScriptedModel::new([ScriptedResponse::text("Recorded.")]);
    let second =
        ask(builder(&model).agent::<p3_agent>().store(store).mcp_server("failing", failing(&markers))).build().unwrap();
    let thread = second.open_thread(&thread_id).await.unwrap();
    let outcome = thread.approve("call_1").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(result_of(&thread).await.content.as_deref(), Some("recorded approved once"));
    assert!(thread.approve("call_1").await.is_err(), "decided once");
    assert_eq!(records(&markers), ["approved once"], "the call ran exactly once");
}

// ---------------------------------------------------------------------------------------------
// P3: a server that exits, hangs or cannot start gives an error result; it is started again.

define_prompt! { name: p3_prompt, model: "scripted", prompt: "x", tools: ["mcp__failing__*"] }
define_agent! { name: p3_agent, side_a: { prompt: p3_prompt, stop_on_response: true } }

#[tokio::test]
async fn p3_a_server_that_exits_mid_call_gives_an_error_result_and_is_started_again() {
    let markers = scratch("p3-exit");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "mcp__failing__exit_now", "{}"),
        ScriptedResponse::text("It died."),
        ScriptedResponse::tool_call("call_2", "mcp__failing__steps", r#"{"count":1}"#),
        ScriptedResponse::text("Back."),
    ]);
    let runtime = builder(&model).agent::<p3_agent>().mcp_server("failing", failing(&markers)).build().unwrap();
    let (thread, result) = run(&runtime, "p3_agent").await;
    assert_eq!(status_of(&result), "error");
    let error = result.content.as_deref().unwrap();
    assert!(error.contains("closed the connection") && error.contains("started again"), "{error}");
    assert_eq!(runtime.mcp_servers()[0].state, McpServerState::Failed);
    thread.send("again").await.unwrap();
    let messages = thread.messages().await.unwrap();
    let second = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_2")).unwrap();
    assert_eq!(second.content.as_deref(), Some("did 1 steps"), "{second:?}");
    let info = &runtime.mcp_servers()[0];
    assert_eq!((info.state, info.starts), (McpServerState::Ready, 2), "started again on the next call");
}

#[tokio::test]
async fn p3_a_hung_call_ends_at_the_tools_timeout() {
    let markers = scratch("p3-hang");
    let model = one_call("mcp__failing__hang", json!({}));
    let runtime = builder(&model)
        .agent::<p3_agent>()
        .mcp_server("failing", failing(&markers).timeout(Duration::from_secs(3)))
        .build()
        .unwrap();
    // The server starts when the prompt offers its tools, before the call: 3 s is the call's,
    // and the result that says so is the timeout's.
    let (_, result) = run(&runtime, "p3_agent").await;
    assert_eq!(status_of(&result), "error");
    assert!(result.content.as_deref().unwrap().contains("did not answer within 3s"), "{result:?}");
    eventually("the server is told the call was cancelled", SETTLE, || markers.join("cancelled").exists()).await;
}

#[tokio::test]
async fn p3_a_server_that_cannot_start_gives_an_error_result_that_says_why() {
    let model = one_call("mcp__failing__steps", json!({"count": 1}));
    let runtime = builder(&model)
        .agent::<p3_agent>()
        .mcp_server("failing", McpTransport::stdio("/nonexistent/mcp-server"))
        .build()
        .unwrap();
    let (_, result) = run(&runtime, "p3_agent").await;
    assert_eq!(status_of(&result), "error");
    let error = result.content.as_deref().unwrap();
    assert!(error.contains("`failing` is not available"), "{error}");
    assert!(error.contains("/nonexistent/mcp-server: not found"), "the server's stderr says why: {error}");
    assert!(runtime.mcp_servers()[0].error.is_some());
}

/// One worker thread: a hung MCP call must leave it free for everything else.
#[tokio::test(flavor = "current_thread")]
async fn p3_a_hung_call_blocks_no_runtime_worker() {
    let markers = scratch("p3-worker");
    static OTHER: AtomicUsize = AtomicUsize::new(0);
    let model = one_call("mcp__failing__hang", json!({}));
    let runtime = builder(&model)
        .agent::<p3_agent>()
        .mcp_server("failing", failing(&markers).timeout(Duration::from_secs(4)))
        .build()
        .unwrap();
    let thread = runtime.create_thread("p3_agent", ThreadOptions::default()).await.unwrap();
    let hung = tokio::spawn({
        let thread = thread.clone();
        async move { thread.send("go").await }
    });
    let mut events = thread.subscribe();
    while !matches!(events.recv().await, Ok(ThreadEvent::ToolCallStarted { .. })) {}
    // While the call hangs, the only worker runs a local tool's future and timers.
    let local = FnTool::new("local", "x", |_| async {
        OTHER.fetch_add(1, Ordering::SeqCst);
        HookToolResult::success("ok")
    });
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let state = ThreadState::detached("t", "a");
        hooks_runtime::tool::Tool::call(&local, &state, json!({})).await;
    }
    assert_eq!(OTHER.load(Ordering::SeqCst), 5);
    assert!(!hung.is_finished(), "the MCP call still hangs");
    hung.await.unwrap().unwrap();
}

// ---------------------------------------------------------------------------------------------
// P4: abort cancels the call on the server; progress notifications reach the event stream.

#[tokio::test]
async fn p4_abort_sends_notifications_cancelled_for_the_call_in_flight() {
    let markers = scratch("p4-abort");
    let model = one_call("mcp__failing__hang", json!({}));
    let runtime = builder(&model).agent::<p3_agent>().mcp_server("failing", failing(&markers)).build().unwrap();
    let thread = runtime.create_thread("p3_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    let running = tokio::spawn({
        let thread = thread.clone();
        async move { thread.send("go").await }
    });
    while !matches!(events.recv().await, Ok(ThreadEvent::ToolCallStarted { .. })) {}
    // The call reaches the server after the event: the abort comes once the tool runs there.
    eventually("the server runs the call", SETTLE, || markers.join("hanging").exists()).await;
    thread.abort();
    let outcome = running.await.unwrap().unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(hooks_runtime::store::StopReason::Aborted), "{outcome}");
    eventually("the server's hung tool is cancelled", SETTLE, || markers.join("cancelled").exists()).await;
}

define_prompt! { name: p4_prompt, model: "scripted", prompt: "x", tools: ["mcp__everything__*"] }
define_agent! { name: p4_agent, side_a: { prompt: p4_prompt, stop_on_response: true } }

#[tokio::test]
async fn p4_progress_notifications_reach_the_calls_events() {
    let model = one_call("mcp__everything__trigger-long-running-operation", json!({"duration": 0.5, "steps": 5}));
    let runtime = builder(&model).agent::<p4_agent>().mcp_server("everything", everything()).build().unwrap();
    let thread = runtime.create_thread("p4_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    thread.send("go").await.unwrap();
    let mut progress = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::ToolCallProgress { id, name, progress: done, total, .. } = event {
            assert_eq!((id.as_str(), name.as_str()), ("call_1", "mcp__everything__trigger-long-running-operation"));
            assert_eq!(total, Some(5.0));
            progress.push(done);
        }
    }
    // Each report the call received, in order; rmcp hands notifications to the client on tasks
    // of their own, so the last one, sent with the answer, may come after the call ended.
    assert!(progress.len() >= 4, "the server's reports reach the call's events: {progress:?}");
    assert_eq!(progress[..4], [1.0, 2.0, 3.0, 4.0]);
    assert!(result_of(&thread).await.content.as_deref().unwrap().contains("Long running operation completed"));
}

// ---------------------------------------------------------------------------------------------
// P5: the tool list follows `notifications/tools/list_changed`.

#[tokio::test]
async fn p5_the_tool_list_follows_the_servers_list_changed_notification() {
    let markers = scratch("p5");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "mcp__failing__unlock", "{}"),
        ScriptedResponse::text("Unlocked."),
        ScriptedResponse::tool_call("call_2", "mcp__failing__secret", "{}"),
        ScriptedResponse::text("Done."),
    ]);
    let runtime = builder(&model).agent::<p3_agent>().mcp_server("failing", failing(&markers)).build().unwrap();
    let names = |runtime: &Runtime| -> Vec<String> {
        runtime.mcp_servers()[0].tools.iter().map(|tool| tool.name.clone()).collect()
    };
    let (thread, _) = run(&runtime, "p3_agent").await;
    assert!(!model.requests()[0].tools.iter().any(|tool| tool.name == "mcp__failing__secret"));
    eventually("the changed list is read", SETTLE, || names(&runtime).contains(&"mcp__failing__secret".to_owned()))
        .await;
    thread.send("again").await.unwrap();
    let offered = &model.requests()[2].tools;
    assert!(offered.iter().any(|tool| tool.name == "mcp__failing__secret"), "the wildcard offers the new tool");
    let messages = thread.messages().await.unwrap();
    let secret = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_2")).unwrap();
    assert_eq!(secret.content.as_deref(), Some("the secret"));
}

// ---------------------------------------------------------------------------------------------
// P3: a stdio server's processes die with its runtime: dropped, or its process killed.

/// The environment variable that makes this binary the child of the SIGKILL test.
const CHILD: &str = "HOOKS_MCP_DEATH_CHILD";
/// Set in the child of the SIGKILL test: the folder its MCP server writes its markers in.
const CHILD_MARKERS: &str = "HOOKS_MCP_DEATH_CHILD_MARKERS";

#[tokio::test]
async fn p3_a_stdio_servers_processes_end_when_its_runtime_is_dropped() {
    let markers = scratch("p3-drop");
    let marker = format!("400.{}", std::process::id());
    let model = one_call("mcp__failing__steps", json!({"count": 1}));
    let runtime = builder(&model)
        .agent::<p3_agent>()
        .mcp_server("failing", support_mcp::failing_with_a_helper(&markers, &marker))
        .build()
        .unwrap();
    run(&runtime, "p3_agent").await;
    assert!(!processes_with_arg(&marker).is_empty(), "the server's helper runs");
    drop(runtime);
    eventually("the server's processes are gone", SETTLE, || processes_with_arg(&marker).is_empty()).await;
}

/// The child's part of the SIGKILL test: a runtime whose call hangs on its stdio server. Does
/// nothing unless run as the child.
#[tokio::test]
async fn child_runs_a_runtime_with_a_hanging_mcp_call() {
    let Ok(marker) = std::env::var(CHILD) else { return };
    let markers = std::path::PathBuf::from(std::env::var(CHILD_MARKERS).expect("the parent names the markers folder"));
    let model = one_call("mcp__failing__hang", json!({}));
    let runtime = builder(&model)
        .agent::<p3_agent>()
        .mcp_server("failing", support_mcp::failing_with_a_helper(&markers, &marker))
        .build()
        .unwrap();
    let thread = runtime.create_thread("p3_agent", ThreadOptions::default()).await.unwrap();
    let _ = thread.send("go").await;
}

#[test]
fn p3_a_stdio_servers_processes_die_with_the_runtimes_process_on_sigkill() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let marker = format!("500.{}", std::process::id());
    let markers = scratch("p3-sigkill");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "conformance_mcp::child_runs_a_runtime_with_a_hanging_mcp_call",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, &marker)
        .env(CHILD_MARKERS, &markers)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the hung call (the server writes `hanging` when it starts it), so the server is
    // busy when its runtime dies.
    let started = std::time::Instant::now();
    while !markers.join("hanging").exists() {
        assert!(started.elapsed() < SETTLE, "the child's MCP call never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!processes_with_arg(&marker).is_empty(), "the child's MCP server did not start its helper");
    child.kill().unwrap(); // SIGKILL: no destructor of the child runs
    child.wait().unwrap();
    let started = std::time::Instant::now();
    while !processes_with_arg(&marker).is_empty() {
        assert!(started.elapsed() < SETTLE, "the MCP server outlived its runtime: {:?}", processes_with_arg(&marker));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The events (INFO and above) logged on the threads of a tokio runtime, as fmt lines.
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn dispatch(&self) -> tracing::Dispatch {
        let logs = self.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || logs.clone())
            .into()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// rmcp's client closes its transport when it is cancelled or dropped, and logs `fail to close
/// sink` at ERROR when the transport's task did not end (the tokio runtime ended under it).
/// After `Runtime::shutdown` every client has ended, within the tokio runtime: it logged `serve
/// finished`, and the end of the tokio runtime has nothing left to cut short.
#[test]
fn p4_a_cancelled_http_call_then_a_shutdown_ends_every_mcp_client_with_no_error_logged() {
    let logs = Logs::default();
    let dispatch = logs.dispatch();
    let _main = tracing::dispatcher::set_default(&dispatch);
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start({
            let dispatch = dispatch.clone();
            // Kept for the thread's life: the runtime's threads log to this test alone.
            move || std::mem::forget(tracing::dispatcher::set_default(&dispatch))
        })
        .build()
        .unwrap();
    let server = tokio.block_on(async {
        let server = EverythingHttp::start().await;
        let model = one_call("mcp__everything__trigger-long-running-operation", json!({"duration": 60, "steps": 60}));
        let runtime = builder(&model)
            .agent::<p4_agent>()
            .mcp_server("everything", McpTransport::http(&server.url))
            .build()
            .unwrap();
        let thread = runtime.create_thread("p4_agent", ThreadOptions::default()).await.unwrap();
        let mut events = thread.subscribe();
        let running = tokio::spawn({
            let thread = thread.clone();
            async move { thread.send("go").await }
        });
        // The server runs the call once it reports progress; the abort cancels it there.
        while !matches!(events.recv().await, Ok(ThreadEvent::ToolCallProgress { .. })) {}
        thread.abort();
        let outcome = running.await.unwrap().unwrap();
        assert_eq!(outcome.status, ThreadStatus::Stopped(hooks_runtime::store::StopReason::Aborted), "{outcome}");
        runtime.shutdown().await;
        let logged = logs.text();
        assert!(
            logged.contains("rmcp::service: serve finished"),
            "the MCP client ended before `shutdown` returned:\n{logged}"
        );
        assert_eq!(
            runtime.mcp_servers()[0].state,
            McpServerState::NotStarted,
            "closed, started again at its next need"
        );
        drop(runtime);
        server
    });
    drop(tokio);
    drop(server);
    let errors: Vec<String> = logs.text().lines().filter(|line| line.contains(" ERROR ")).map(str::to_owned).collect();
    assert!(errors.is_empty(), "a clean end logs no ERROR: {errors:#?}");
}
