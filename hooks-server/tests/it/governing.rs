//! Governing tool calls over HTTP, round two: with the [`HookRuns`] layer in the `tracing`
//! subscriber, each runtime-wide guard and `before_tool_call` hook that runs shows as a
//! `hook_run` event like any other hook's (id, kind, source, duration) with its decision (G10);
//! the model's arguments that fail the tool's schema reach no decider or tool (G9); the
//! authorizer and the tool decide in the type hooks do (G11); an interrupted call's
//! `tool_call_done` and stored result say so (G12); a permission rule's decision is a `hook_run`
//! named by the rule, and each stored result carries its decision record (G15).

use crate::support;

use std::sync::Arc;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::{Value, json};
use support::{ALICE, Server, SseEvent};

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
            for timeline in ["durationUs", "startedAtUs", "runId", "within"] {
                data.as_object_mut().unwrap().remove(timeline);
            }
            data
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g10_guards_and_before_tool_call_hooks_are_hook_runs_with_their_decision() {
    let runs = support::hook_runs();
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
    let approved = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved);
    assert!(store.approvals().unwrap().advance_tool_call(&thread, &approved).await.unwrap());
    let running = ToolCallChange::new("call_1", ApprovalState::Approved, ApprovalState::Running);
    assert!(store.approvals().unwrap().advance_tool_call(&thread, &running).await.unwrap());

    let (status, body) = server.approve_listed(&thread, "call_2", ALICE).await;
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

define_prompt! { name: g9_prompt, model: "scripted", prompt: "Pay.", tools: ["pay"], hooks: [g10_policy] }
define_agent! {
    name: g9_agent,
    side_a: { prompt: g9_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g9_arguments_the_schema_refuses_get_an_error_result_naming_the_path_and_nothing_runs() {
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = runs.clone();
    let pay = FnTool::new("pay", "Pays.", move |_args| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { HookToolResult::success("paid") }
    })
    .with_parameters(json!({"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}));
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":"SECRET-five"}"#),
        ScriptedResponse::text("I will try again."),
    ]);
    let runtime = Runtime::builder().agent::<g9_agent>().model("scripted", model).tool(pay).build().unwrap();
    let server = Server::start(runtime, ServerConfig::default()).await;
    let thread = server.create_thread(ALICE, "g9_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"go"}"#).await;
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "idle", "not parked: g10_policy never saw it; {events:#?}");
    assert!(!events.iter().any(|e| e.kind() == "approval_requested"), "{events:#?}");
    let done = events.iter().find(|e| e.kind() == "tool_call_done").unwrap();
    assert_eq!(done.data["status"], "error", "{done:?}");
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 0);
    let (_, body) = server.get(&format!("/threads/{thread}/messages"), ALICE).await;
    let result = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    let text = result["content"].as_str().unwrap();
    assert!(text.contains("/amount") && text.contains("/properties/amount/type"), "{text}");
    assert!(!text.contains("SECRET"), "never the values: {text}");
}

define_prompt! { name: g11_prompt, model: "scripted", prompt: "Pay.", tools: ["transfer", "lookup"] }
define_agent! {
    name: g11_agent,
    side_a: { prompt: g11_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g11_the_authorizers_ask_and_the_tools_deny_carry_their_reasons() {
    let transfer = tool("transfer").with_approval(|_| ToolDecision::deny("transfers are done at a branch"));
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "transfer", "{}").then_tool_call("call_2", "lookup", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let runtime = Runtime::builder()
        .agent::<g11_agent>()
        .model("scripted", model)
        .tool(transfer)
        .tool(tool("lookup"))
        .authorize_tools(|_, call| {
            if call.name() == "lookup" {
                ToolDecision::ask("lookups are logged by a person")
            } else {
                ToolDecision::allow()
            }
        })
        .build()
        .unwrap();
    let server = Server::start(runtime, ServerConfig::default()).await;
    let thread = server.create_thread(ALICE, "g11_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"go"}"#).await;
    let events = stream.until("run_finished").await;
    let done = events.iter().find(|e| e.kind() == "tool_call_done").unwrap();
    assert_eq!((done.data["id"].as_str(), done.data["denied"].as_bool()), (Some("call_1"), Some(true)), "{done:?}");
    let (_, body) = server.get(&format!("/threads/{thread}/approvals"), ALICE).await;
    assert_eq!(body["approvals"][0]["id"], "call_2", "{body}");
    assert_eq!(
        body["approvals"][0]["reasons"],
        json!([{"hook": "authorize_tools", "reason": "lookups are logged by a person"}]),
        "{body}"
    );
    let (status, body) = server.approve_listed(&thread, "call_2", ALICE).await;
    assert_eq!(status, 202, "{body}");
    stream.until("run_finished").await;
    let (_, body) = server.get(&format!("/threads/{thread}/messages"), ALICE).await;
    let denial = body["messages"].as_array().unwrap().iter().find(|m| m["tool_call_id"] == "call_1").unwrap();
    assert_eq!(denial["content"], "the tool call was denied by `transfer`: transfers are done at a branch");
    assert_eq!(denial["tool_denied"], true);
}

define_prompt! { name: g15_prompt, model: "scripted", prompt: "Go.", tools: ["lookup", "wipe"] }
define_agent! {
    name: g15_agent,
    side_a: { prompt: g15_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g15_a_rules_decision_is_a_hook_run_named_by_the_rule_and_the_record_reaches_the_inspector() {
    use hooks_runtime::declarative::{PermissionRule, SettingsPermissions};
    let runs = support::hook_runs();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "lookup", "{}").then_tool_call("call_2", "wipe", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let mut rules = SettingsPermissions::default();
    rules.deny.push(PermissionRule::parse("wipe").unwrap());
    let runtime = Runtime::builder()
        .agent::<g15_agent>()
        .model("scripted", model)
        .tool(tool("lookup"))
        .tool(tool("wipe"))
        .permission_rules(rules)
        .build()
        .unwrap();
    let server = Arc::new(Server::start(runtime, ServerConfig::default().hook_runs(Some(runs))).await);
    let thread = server.create_thread(ALICE, "g15_agent").await;
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    server.post(&format!("/threads/{thread}/messages"), ALICE, r#"{"content":"go"}"#).await;
    let events = stream.until("run_finished").await;
    assert_eq!(
        governing_runs(&events),
        [
            json!({"type": "hook_run", "hookId": "code:permissions.deny[0]", "kind": "before_tool_call", "source": "permissions", "decision": "deny"})
        ],
        "only the rule answered, as the rule: {events:#?}"
    );
    // The stored results carry their records, as the inspector reads them.
    let (_, body) = server.get(&format!("/threads/{thread}/messages"), ALICE).await;
    let messages = body["messages"].as_array().unwrap();
    let record = |call: &str| {
        let message = messages.iter().find(|m| m["tool_call_id"] == call).unwrap();
        let record: Value = serde_json::from_str(message["admission"].as_str().unwrap()).unwrap();
        record["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| {
                (entry["decider"].as_str().unwrap().to_owned(), entry["decision"].as_str().unwrap().to_owned())
            })
            .collect::<Vec<_>>()
    };
    let pair = |decider: &str, decision: &str| (decider.to_owned(), decision.to_owned());
    assert_eq!(record("call_1"), [pair("schema", "allow")]);
    assert_eq!(record("call_2"), [pair("schema", "allow"), pair("permissions", "deny")]);
    let denied = messages.iter().find(|m| m["tool_call_id"] == "call_2").unwrap();
    let record: Value = serde_json::from_str(denied["admission"].as_str().unwrap()).unwrap();
    assert_eq!(record["entries"][1]["rule"], "wipe", "{denied}");
}
