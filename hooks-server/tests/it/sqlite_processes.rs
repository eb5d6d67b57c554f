//! Several processes on one SQLite file (O5): a server follows what another process does to its
//! threads (a decision, the run it resumes, its messages and status) in its event streams and
//! its reads. The other process is a second store opened on the same file: a connection and an
//! owner of its own, as another process has.

use crate::support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::SqliteStore;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::{Value, json};
use support::{ALICE, Server};

#[hook(before_tool_call, id = "refund_limit", on_failure = deny)]
fn refund_limit(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::ask("refunds need a person")
}

define_prompt! { name: refund_prompt, model: "scripted", prompt: "Refund.", tools: ["refund"], hooks: [refund_limit] }
define_agent! {
    name: refund_agent,
    side_a: { prompt: refund_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

fn runtime(db: &Path, runs: Arc<AtomicUsize>, responses: Vec<ScriptedResponse>) -> Runtime {
    let refund = FnTool::new("refund", "Refunds.", move |_arguments: Value| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            HookToolResult::success("refunded")
        }
    });
    Runtime::builder()
        .agent::<refund_agent>()
        .model("scripted", ScriptedModel::new(responses))
        .tool(refund)
        .store(SqliteStore::open(db).expect("open the SQLite file"))
        .build()
        .expect("runtime")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hooks-server-sqlite-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o5_a_decision_from_another_process_reaches_the_servers_stream_and_reads_on_sqlite() {
    let dir = scratch("o5");
    let db = dir.join("threads.db");
    let runs = Arc::new(AtomicUsize::new(0));
    let asks = ScriptedResponse::tool_call("call_1", "refund", r#"{"amount":250}"#);
    let server = Server::start(runtime(&db, runs.clone(), vec![asks]), ServerConfig::default()).await;
    let id = server.create_thread(ALICE, "refund_agent").await;
    let mut stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Refund me."}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "awaiting_approval", "{events:#?}");

    // Another process decides, and resumes the turn there.
    let other = runtime(&db, runs.clone(), vec![ScriptedResponse::text("Refunded.")]);
    let decided = Instant::now();
    let outcome = other.open_thread(&id).await.unwrap().approve("call_1").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Refunded."), "{outcome}");

    let events = stream.until("status").await;
    let resolved = events.iter().find(|event| event.kind() == "approval_resolved").expect("approval_resolved");
    assert_eq!(resolved.data, json!({"type": "approval_resolved", "id": "call_1", "decision": "approved"}));
    let mut events = events;
    while !events.iter().any(|event| event.kind() == "status" && event.data["status"] == "idle") {
        events.push(stream.next().await);
    }
    let seen = decided.elapsed();
    let created: Vec<&str> = events
        .iter()
        .filter(|event| event.kind() == "message_created")
        .filter_map(|event| event.data["message"]["content"].as_str())
        .collect();
    assert_eq!(created, ["refunded", "Refunded."], "{events:#?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the call ran once, in the process that resumed the turn");
    let (_, thread) = server.get(&format!("/threads/{id}"), ALICE).await;
    assert_eq!(thread["status"], "idle", "{thread}");
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"], json!([]));
    // For the record (docs/reliability.md): the whole resumed run, decision to idle.
    eprintln!("decision to the idle status on the other process's stream: {seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// V4 across processes, the data the inspector's timeline draws from (the page itself is
/// checked in `inspector_browser`): a run of another process on the same SQLite file (here a
/// second runtime in this test, with its own store connection) sends no run events to this
/// server, so its part of the turn reaches the stream only as the store's events and messages;
/// those carry the times the page needs (the call's result stored a real wait after the run
/// that asked), and the next message's run is framed apart, as a message's run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v4_a_turn_resumed_by_another_process_reaches_the_stream_as_timed_messages_and_the_next_run_apart() {
    const WAIT: std::time::Duration = std::time::Duration::from_millis(300);
    let dir = scratch("v4-timeline");
    let db = dir.join("threads.db");
    let runs = Arc::new(AtomicUsize::new(0));
    let asks = ScriptedResponse::tool_call("call_1", "refund", r#"{"amount":250}"#);
    let script = vec![asks, ScriptedResponse::text("Noted.")];
    let config = ServerConfig::default().hook_runs(Some(crate::support::hook_runs()));
    let server = Server::start(runtime(&db, runs.clone(), script), config).await;
    let id = server.create_thread(ALICE, "refund_agent").await;
    let mut stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Refund me."}"#).await;
    assert_eq!(status, 202, "{body}");
    let mut events = stream.until("run_finished").await;
    let asked_us = events.last().unwrap().data["atUs"].as_u64().expect("atUs");
    assert_eq!(events.last().unwrap().data["status"], "awaiting_approval", "{events:#?}");

    tokio::time::sleep(WAIT).await;
    let other = runtime(&db, runs.clone(), vec![ScriptedResponse::text("Refunded.")]);
    let outcome = other.open_thread(&id).await.unwrap().approve("call_1").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Refunded."), "{outcome}");
    loop {
        let status = stream.until("status").await;
        let idle = status.last().unwrap().data["status"] == "idle";
        events.extend(status);
        if idle {
            break;
        }
    }
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Thanks."}"#).await;
    assert_eq!(status, 202, "{body}");
    events.extend(stream.until("run_finished").await);

    // Two runs of this server, both a message's; none for the other process's run.
    let started: Vec<&Value> = events.iter().filter(|event| event.kind() == "run_started").map(|e| &e.data).collect();
    assert_eq!(started.len(), 2, "{events:#?}");
    assert!(started.iter().all(|run| !run["runId"].as_str().unwrap().starts_with("resume_")), "{started:?}");
    // Between the first run's end and the second's start: the decision, and the resumed run's
    // messages with the times the store gave them.
    let first_end = events.iter().position(|event| event.kind() == "run_finished").unwrap();
    let second_start = events.iter().rposition(|event| event.kind() == "run_started").unwrap();
    let between = &events[first_end + 1..second_start];
    assert!(
        between
            .iter()
            .any(|event| event.data == json!({"type": "approval_resolved", "id": "call_1", "decision": "approved"}))
    );
    let stored: Vec<&Value> =
        between.iter().filter(|event| event.kind() == "message_created").map(|event| &event.data["message"]).collect();
    let roles: Vec<&str> = stored.iter().map(|message| message["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["tool", "assistant"], "{between:#?}");
    let result = stored[0];
    assert_eq!(result["tool_call_id"], "call_1");
    let result_us = result["created_at"].as_u64().expect("created_at") * 1000;
    // Milliseconds: a stored time can read up to 1 ms early.
    assert!(
        result_us + 1000 >= asked_us + WAIT.as_micros() as u64,
        "the result was stored after the wait: {result_us} vs {asked_us} + {WAIT:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
