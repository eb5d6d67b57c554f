//! Hook runs on a thread's event stream: with the [`HookRuns`] layer in the `tracing`
//! subscriber, each hook that runs during a thread's run shows as a `hook_run` event (id, kind,
//! source, duration) on that thread's stream, and a failing hook also as `hook_failed`, without
//! its error text. Each `filter_messages` chain shows as `messages_filtered` with the message
//! counts before and after it.

use crate::support;

use std::sync::Arc;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::json;
use support::{ALICE, BOB, Server, SseEvent};

#[hook(tool_call_started, id = "runs_started")]
fn runs_started(_state: &ThreadState, _call: &HookToolCall, _progress: Option<&str>) {}

#[hook(tool_call_done, id = "runs_done_fails")]
async fn runs_done_fails(
    _state: &ThreadState,
    _call: &HookToolCall,
    _result: &HookToolResult,
) -> Result<(), HookError> {
    Err(HookError::new("SECRET detail of the failure"))
}

#[hook(filter_messages, id = "runs_filter")]
fn runs_filter(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    // Drops the tool's result; the runtime then drops the call it answered too.
    messages.into_iter().filter(|message| message.role != Role::Tool).collect()
}

define_prompt! {
    name: runs_prompt,
    model: "scripted",
    prompt: "Run.",
    tools: ["noop"],
    hooks: [runs_started, runs_done_fails, runs_filter],
}

define_agent! {
    name: runs_agent,
    side_a: { prompt: runs_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

fn hook_events(events: &[SseEvent]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| e.kind().starts_with("hook_") && e.data["hookId"] != "runs_filter")
        .map(|e| {
            let mut data = e.data.clone();
            // Durations vary; that there is one is checked below.
            for timeline in ["durationUs", "startedAtUs", "runId", "within"] {
                data.as_object_mut().unwrap().remove(timeline);
            }
            data
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_runs_reach_their_threads_stream_with_kind_source_duration_and_failure() {
    let runs = support::hook_runs();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "noop", "{}"),
        ScriptedResponse::text("done"),
        ScriptedResponse::text("bob's answer"),
    ]);
    let runtime = Runtime::builder()
        .agent::<runs_agent>()
        .model("scripted", model)
        .tool(FnTool::new("noop", "Does nothing.", |_args| async { HookToolResult::success("ok") }))
        .build()
        .unwrap();
    let config = ServerConfig::default().hook_runs(Some(runs));
    let server = Arc::new(Server::start(runtime, config).await);
    let alices = server.create_thread(ALICE, "runs_agent").await;
    let bobs = server.create_thread(BOB, "runs_agent").await;
    let mut alice_stream = server.stream(&format!("/threads/{alices}/events"), ALICE, None).await;
    let mut bob_stream = server.stream(&format!("/threads/{bobs}/events"), BOB, None).await;

    server.post(&format!("/threads/{alices}/messages"), ALICE, r#"{"content":"go"}"#).await;
    let events = alice_stream.until("run_finished").await;
    assert_eq!(
        hook_events(&events),
        [
            json!({ "type": "hook_run", "hookId": "runs_started", "kind": "tool_call_started", "source": "prompt:runs_prompt" }),
            json!({ "type": "hook_run", "hookId": "runs_done_fails", "kind": "tool_call_done", "source": "prompt:runs_prompt" }),
            json!({ "type": "hook_failed", "hookId": "runs_done_fails", "kind": "tool_call_done" }),
        ],
        "{events:#?}"
    );
    assert!(events.iter().filter(|e| e.kind() == "hook_run").all(|e| e.data["durationUs"].is_u64()));
    // What the filter chain did to each request's history: nothing to the first (the user's
    // message), the tool result cut from the second.
    let filtered: Vec<&serde_json::Value> =
        events.iter().filter(|e| e.kind() == "messages_filtered").map(|e| &e.data).collect();
    assert_eq!(
        filtered,
        [
            &json!({ "type": "messages_filtered", "before": 1, "after": 1 }),
            &json!({ "type": "messages_filtered", "before": 3, "after": 2 }),
        ],
        "{events:#?}"
    );
    assert!(!events.iter().any(|e| e.data.to_string().contains("SECRET")), "a hook's error text reached the stream");

    // Bob's run has no tool call, so no hook runs; Alice's never show on his stream.
    server.post(&format!("/threads/{bobs}/messages"), BOB, r#"{"content":"hi"}"#).await;
    let events = bob_stream.until("run_finished").await;
    assert_eq!(hook_events(&events), Vec::<serde_json::Value>::new(), "{events:#?}");
}
