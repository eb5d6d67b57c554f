//! Scale-out through the server: two server processes on one PostgreSQL schema. A client sends
//! to a thread through server A (this process) and follows the thread's stream on server B (a
//! child process running this test binary, selecting [`server_b_child`]): B shows every event
//! of A's run, once each and in A's order, with the messages in them, and reports the status the
//! run left. A's own stream shows each of its events once, although they also come back to it
//! through the store.
//!
//! Needs feature `postgres` and the server `HOOKS_DATABASE_URL` names (default
//! `postgres://postgres@127.0.0.1:5432/test`); fails, never skips, when it is unreachable.

use crate::support;

use std::process::Stdio;
use std::time::Duration;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{PostgresOptions, PostgresStore};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::Value;
use support::{ALICE, PATIENCE, Server, SseEvent};
use tokio::io::{AsyncBufReadExt, BufReader};

/// Set in the child: the schema server B serves.
const CHILD_ENV: &str = "HOOKS_SERVER_SCALE_CHILD";
/// What the child prints once it listens, before its address.
const LISTENING: &str = "LISTENING ";

define_prompt! {
    name: scale_prompt,
    model: "scripted",
    prompt: "Look things up.",
    tools: ["lookup"],
}

define_agent! {
    name: scale_agent,
    side_a: { prompt: scale_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

fn database_url() -> String {
    std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

async fn store(schema: &str) -> PostgresStore {
    PostgresStore::connect_with(&database_url(), PostgresOptions::new().schema(schema).max_connections(8))
        .await
        .unwrap_or_else(|e| panic!("{e}; start PostgreSQL or set HOOKS_DATABASE_URL"))
}

/// A runtime on the schema whose model looks the weather up, then answers, `turns` times.
async fn runtime(schema: &str, turns: usize) -> Runtime {
    let script = (0..turns).flat_map(|turn| {
        [
            ScriptedResponse::tool_call(&format!("call_{turn}"), "lookup", r#"{"query":"Looking it up"}"#),
            ScriptedResponse::text(&format!("Sunny, answer {turn}.")),
        ]
    });
    Runtime::builder()
        .agent::<scale_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(
            FnTool::new("lookup", "Looks a thing up.", |_args| async { HookToolResult::success("found it") })
                .with_progress_argument("query"),
        )
        .store(store(schema).await)
        .build()
        .expect("runtime")
}

/// Server B: serves the schema, prints its address, and runs until the parent kills it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_b_child() {
    let Ok(schema) = std::env::var(CHILD_ENV) else {
        return;
    };
    let server = Server::start(runtime(&schema, 0).await, ServerConfig::default()).await;
    println!("{LISTENING}{}", server.base);
    std::future::pending::<()>().await;
}

/// The name the test harness knows [`server_b_child`] by: its path in the test binary.
fn child_test_name() -> String {
    let module = module_path!().split_once("::").map_or(module_path!(), |(_crate, module)| module);
    format!("{module}::server_b_child")
}

/// A schema of its own, dropped at the end.
struct Schema(String);

impl Schema {
    fn new() -> Schema {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        Schema(format!("t_server_scale_{}_{nanos}", std::process::id()))
    }

    async fn drop(self) {
        let (client, connection) = tokio_postgres::connect(&database_url(), tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL (HOOKS_DATABASE_URL) is unreachable: {e}"));
        tokio::spawn(connection);
        client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.0)).await.expect("drop the schema");
    }
}

/// Starts server B in a child process and returns it with a client for it.
async fn spawn_server_b(schema: &str) -> (tokio::process::Child, Server) {
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &child_test_name(), "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, schema)
        .env("HOOKS_DATABASE_URL", database_url())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn server B");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let base = tokio::time::timeout(PATIENCE, async {
        while let Some(line) = lines.next_line().await.expect("read server B's output") {
            // The test harness may have begun the line with the test's name.
            if let Some((_, base)) = line.split_once(LISTENING) {
                return base.trim().to_owned();
            }
        }
        panic!("server B ended before it listened");
    })
    .await
    .expect("server B listens within the patience");
    (child, Server { base, client: reqwest::Client::new() })
}

/// The events the runtime emitted (what the store carries), without the serving process's own.
fn runtime_events(events: &[SseEvent]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| !e.kind().starts_with("run_") && !e.kind().starts_with("hook_"))
        .map(|e| e.data.clone())
        .collect()
}

/// Events until the run's final `status` (one that is not `running`).
async fn until_settled(stream: &mut support::SseReader) -> Vec<SseEvent> {
    let mut events = Vec::new();
    loop {
        let event = stream.next().await;
        let settled = event.kind() == "status" && event.data["status"] != "running";
        events.push(event);
        if settled {
            return events;
        }
    }
}

fn assert_ids_consecutive(events: &[SseEvent], what: &str) {
    let ids: Vec<u64> = events.iter().map(|e| e.id.as_deref().expect("an event id").parse().unwrap()).collect();
    let first = ids[0];
    assert_eq!(ids, (first..first + ids.len() as u64).collect::<Vec<_>>(), "{what}: an id skipped or repeated");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_server_b_sees_every_event_of_a_run_on_server_a_once_and_in_order() {
    let schema = Schema::new();
    let a = Server::start(runtime(&schema.0, 2).await, ServerConfig::default()).await;
    let (mut child, b) = spawn_server_b(&schema.0).await;

    let id = a.create_thread(ALICE, "scale_agent").await;
    // B lists it from the store, and follows it from the moment its stream opens.
    let (status, listed) = b.get("/threads", ALICE).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["threads"][0]["id"], id.as_str());
    let mut on_b = b.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let mut on_a = a.stream(&format!("/threads/{id}/events"), ALICE, None).await;

    for turn in 0..2 {
        let (status, body) =
            a.post(&format!("/threads/{id}/messages"), ALICE, &format!(r#"{{"content":"Weather {turn}?"}}"#)).await;
        assert_eq!(status, 202, "{body}");
        let seen_on_a = on_a.until("run_finished").await;
        let seen_on_b = until_settled(&mut on_b).await;

        let from_a = runtime_events(&seen_on_a);
        assert_eq!(runtime_events(&seen_on_b), from_a, "turn {turn}: B shows A's events, once each, in order");
        assert_ids_consecutive(&seen_on_b, "B");
        assert_ids_consecutive(&seen_on_a, "A");
        let kinds: Vec<&str> = from_a.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "status",
                "message_created",
                "tool_call_started",
                "message_created",
                "tool_call_done",
                "message_created",
                "message_created",
                "status"
            ],
            "turn {turn}: A shows each of its events once, though the store brings them back"
        );
        let contents: Vec<&str> = seen_on_b.iter().filter_map(|e| e.data["message"]["content"].as_str()).collect();
        let weather = format!("Weather {turn}?");
        let answer = format!("Sunny, answer {turn}.");
        assert_eq!(contents, [weather.as_str(), "found it", answer.as_str()], "B's events carry the messages");
        assert_eq!(
            seen_on_b.iter().find(|e| e.kind() == "tool_call_started").unwrap().data["progress"],
            "Looking it up"
        );
    }
    // B reports the status A's run left, and its history is the store's.
    let (_, thread) = b.get(&format!("/threads/{id}"), ALICE).await;
    assert_eq!(thread["status"], "idle", "{thread}");
    let (_, messages) = b.get(&format!("/threads/{id}/messages"), ALICE).await;
    assert_eq!(messages["messages"].as_array().unwrap().len(), 8);
    // Nothing more arrives on B: no event was repeated after the runs.
    let extra = tokio::time::timeout(Duration::from_millis(500), on_b.next()).await;
    assert!(extra.is_err(), "an event after the runs: {extra:?}");

    child.kill().await.expect("stop server B");
    schema.drop().await;
}

/// Two servers, each with its own runtime and pool, on one schema (as two processes would be):
/// a user value set and a thread created through B reach the user stream of a client of A, once
/// each, and A reads the value from the store without a client of its own having seen it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u1_user_changes_on_server_b_reach_the_user_stream_on_server_a_once() {
    let schema = Schema::new();
    let a = Server::start(runtime(&schema.0, 0).await, ServerConfig::default()).await;
    let b = Server::start(runtime(&schema.0, 0).await, ServerConfig::default()).await;
    let mut on_a = a.stream("/user/events", ALICE, None).await;
    assert_eq!(on_a.next().await.kind(), "client_attached");

    let (status, body) = b.call(reqwest::Method::PUT, "/user/values/theme", ALICE, Some(r#""dark""#)).await;
    assert_eq!(status, 204, "{body}");
    let id = b.create_thread(ALICE, "scale_agent").await;
    let (status, body) = b.call(reqwest::Method::DELETE, "/user/values/theme", ALICE, None).await;
    assert_eq!(status, 204, "{body}");

    let seen: Vec<Value> = [on_a.next().await, on_a.next().await, on_a.next().await].map(|e| e.data).into();
    assert_eq!(
        seen,
        [
            serde_json::json!({ "type": "value_changed", "key": "theme", "value": "dark" }),
            serde_json::json!({ "type": "thread_created", "threadId": id, "agent": "scale_agent" }),
            serde_json::json!({ "type": "value_changed", "key": "theme", "value": null }),
        ],
        "B's changes, in order, on A's stream"
    );
    let extra = tokio::time::timeout(Duration::from_millis(500), on_a.next()).await;
    assert!(extra.is_err(), "each change once: {extra:?}");

    // Values are in the store: A reads what B set, with or without a client.
    let (status, body) = b.call(reqwest::Method::PUT, "/user/values/lang", ALICE, Some(r#""fr""#)).await;
    assert_eq!(status, 204, "{body}");
    let (status, body) = a.get("/user/values/lang", ALICE).await;
    assert_eq!((status, &body["value"]), (200, &serde_json::json!("fr")), "{body}");
    let (status, body) = a.get("/user/values/theme", ALICE).await;
    assert_eq!(status, 404, "{body}");
    schema.drop().await;
}
