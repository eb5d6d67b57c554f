//! Governing hook runs on a thread's event stream (G10): with the [`HookRuns`] layer in the
//! `tracing` subscriber, each runtime-wide guard and `before_tool_call` hook that runs shows as
//! a `hook_run` event like any other hook's (id, kind, source, duration) with its decision; an
//! interrupted call's `tool_call_done` says so (G12).

mod support;

use std::sync::Arc;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::{HookRuns, ServerConfig};
use serde_json::{Value, json};
use support::{ALICE, Server, SseEvent};
use tracing_subscriber::layer::SubscriberExt;

/// A runtime-wide guard: it lets every call through.
#[hook(before_tool_call, id = "g10_guard", on_failure = deny)]
fn g10_guard(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::allow()
}

/// The prompt's hook: `wipe` is denied, `pay` asks.
#[hook(before_tool_call, id = "g10_policy", on_failure = deny)]
fn g10_policy(_state: &ThreadState, call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    match call.name() {
        "wipe" => ToolDecision::deny("nothing is wiped"),
        "pay" => ToolDecision::ask("payments need a person"),
        _ => ToolDecision::allow(),
    }
}

define_prompt! { name: g10_prompt, model: "scripted", prompt: "Go.", tools: ["lookup", "wipe", "pay"], hooks: [g10_policy] }
define_agent! {
    name: g10_agent,
    side_a: { prompt: g10_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

fn tool(name: &'static str) -> FnTool {
    FnTool::new(name, "A tool.", |_args| async { HookToolResult::success("ok") })
}

fn governing_runs(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e.kind() == "hook_run" && e.data["kind"] == "before_tool_call")
        .map(|e| {
            assert!(e.data["durationUs"].is_u64(), "a duration: {e:?}");
            let mut data = e.data.clone();
            data.as_object_mut().unwrap().remove("durationUs");
            data
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g10_guards_and_before_tool_call_hooks_are_hook_runs_with_their_decision() {
    let runs = HookRuns::new();
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(runs.layer())).expect("one subscriber");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "lookup", "{}")
            .then_tool_call("call_2", "wipe", "{}")
            .then_tool_call("call_3", "pay", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let runtime = Runtime::builder()
        .agent::<g10_agent>()
        .model("scripted", model)
        .tool(tool("lookup"))
        .tool(tool("wipe"))
        .tool(tool("pay"))
        .guard::<g10_guard>()
        .build()
        .unwrap();
    let server = Arc::new(Server::start(runtime, ServerConfig::default().hook_runs(Some(runs))).await);
    let thread = server.create_thread(ALICE, "g10_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"go"}"#).await;
    let events = stream.until("run_finished").await;
    let run = |hook: &str, source: &str, decision: &str| json!({ "type": "hook_run", "hookId": hook, "kind": "before_tool_call", "source": source, "decision": decision });
    assert_eq!(
        governing_runs(&events),
        [
            run("g10_guard", "runtime", "allow"),
            run("g10_policy", "prompt:g10_prompt", "allow"),
            run("g10_guard", "runtime", "allow"),
            run("g10_policy", "prompt:g10_prompt", "deny"),
            run("g10_guard", "runtime", "allow"),
            run("g10_policy", "prompt:g10_prompt", "ask"),
        ],
        "{events:#?}"
    );
}

define_prompt! { name: g12_prompt, model: "scripted", prompt: "Pay.", tools: ["pay"], hooks: [g10_policy] }
define_agent! {
    name: g12_agent,
    side_a: { prompt: g12_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g12_an_interrupted_call_is_marked_in_tool_call_done_and_the_stored_result() {
    use hooks_runtime::approvals::{ApprovalState, ToolCallChange};
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "pay", "{}").then_tool_call("call_2", "pay", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let runtime = Runtime::builder().agent::<g12_agent>().model("scripted", model).tool(tool("pay")).build().unwrap();
    let store = runtime.store().clone();
    let server = Server::start(runtime, ServerConfig::default()).await;
    let thread = server.create_thread(ALICE, "g12_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"go"}"#).await;
    stream.until("run_finished").await;
    // What a process that died while running the approved call_1 leaves in the store.
    let approved = ToolCallChange::to(ApprovalState::Approved);
    assert!(store.advance_tool_call(&thread, "call_1", ApprovalState::Pending, &approved).await.unwrap());
    let running = ToolCallChange::to(ApprovalState::Running);
    assert!(store.advance_tool_call(&thread, "call_1", ApprovalState::Approved, &running).await.unwrap());

    let (status, body) =
        server.post(&format!("/threads/{thread}/approvals/call_2"), ALICE, r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    let done: Vec<&Value> = events.iter().filter(|e| e.kind() == "tool_call_done").map(|e| &e.data).collect();
    assert_eq!(
        done,
        [
            &json!({"type": "tool_call_done", "id": "call_1", "name": "pay", "status": "error", "interrupted": true}),
            &json!({"type": "tool_call_done", "id": "call_2", "name": "pay", "status": "success"}),
        ],
        "{events:#?}"
    );
    let (_, body) = server.get(&format!("/threads/{thread}/messages"), ALICE).await;
    let interrupted = body["messages"].as_array().unwrap().iter().find(|m| m["tool_call_id"] == "call_1").unwrap();
    assert_eq!(interrupted["tool_interrupted"], true, "{interrupted}");
}
