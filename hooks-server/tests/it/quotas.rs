//! What one user can hold: threads per user, queued inputs per thread, the size of a thread's
//! arguments, a page of `GET /threads`, and how long a request body may take. Each limit
//! answers 4xx or 429 naming itself and the setting that raises it.

use crate::support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::{Value, json};
use support::{ALICE, BOB, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

define_prompt! {
    name: wait_prompt,
    model: "scripted",
    prompt: "Wait for the gate.",
    tools: ["wait"],
}

define_agent! {
    name: wait_agent,
    side_a: { prompt: wait_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// A runtime whose every run calls `wait`, which takes a permit of `gate`, then answers.
fn runtime(runs: usize, gate: Arc<Semaphore>) -> Runtime {
    let script = (0..runs).flat_map(|run| {
        [ScriptedResponse::tool_call(&format!("call_{run}"), "wait", "{}"), ScriptedResponse::text("Done.")]
    });
    Runtime::builder()
        .agent::<wait_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(FnTool::new("wait", "Waits for the gate.", move |_args| {
            let gate = gate.clone();
            async move {
                gate.acquire().await.expect("gate open").forget();
                HookToolResult::success("through")
            }
        }))
        .build()
        .expect("runtime")
}

fn config() -> ServerConfig {
    ServerConfig::default().catalog(vec!["wait_agent".into()])
}

fn error_of(body: &Value) -> (&str, &str) {
    (body["error"]["code"].as_str().unwrap_or(""), body["error"]["message"].as_str().unwrap_or(""))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_at_the_thread_quota_gets_429_naming_it_and_other_users_go_on() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config().max_threads_per_user(3)).await;
    for _ in 0..3 {
        server.create_thread(ALICE, "wait_agent").await;
    }
    let refused = server
        .request(reqwest::Method::POST, "/threads", ALICE)
        .header("content-type", "application/json")
        .body(r#"{"agent":"wait_agent"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    // Waiting does not lift this limit: no `Retry-After` invites a retry that cannot succeed.
    assert!(refused.headers().get("retry-after").is_none(), "{:?}", refused.headers());
    let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    let (code, message) = error_of(&body);
    assert_eq!(code, "too_many_threads");
    assert!(message.contains("the limit is 3") && message.contains("max_threads_per_user"), "{message}");
    server.create_thread(BOB, "wait_agent").await;
    let (_, listed) = server.get("/threads", ALICE).await;
    assert_eq!(listed["threads"].as_array().unwrap().len(), 3, "the refused thread was not created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_arguments_over_the_limit_get_413_naming_it() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config().max_arguments_bytes(100)).await;
    let small = json!({ "agent": "wait_agent", "arguments": { "city": "x".repeat(50) } }).to_string();
    assert_eq!(server.post("/threads", ALICE, &small).await.0, 201);
    let large = json!({ "agent": "wait_agent", "arguments": { "city": "x".repeat(200) } }).to_string();
    let (status, body) = server.post("/threads", ALICE, &large).await;
    assert_eq!(status, 413, "{body}");
    let (code, message) = error_of(&body);
    assert_eq!(code, "arguments_too_large");
    assert!(message.contains("the limit is 100 bytes") && message.contains("max_arguments_bytes"), "{message}");
    assert!(!message.contains("xxxx"), "the value is never echoed: {message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_input_queue_answers_429_naming_the_limit_until_a_run_finishes() {
    let gate = Arc::new(Semaphore::new(0));
    let server = Server::start(runtime(3, gate.clone()), config().max_queued_inputs(2)).await;
    let id = server.create_thread(ALICE, "wait_agent").await;
    let path = format!("/threads/{id}/messages");
    let mut events = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    for _ in 0..2 {
        assert_eq!(server.post(&path, ALICE, r#"{"content":"go"}"#).await.0, 202);
    }
    let refused = server
        .request(reqwest::Method::POST, &path, ALICE)
        .header("content-type", "application/json")
        .body(r#"{"content":"one more"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 429);
    // Waiting lifts this limit: the answer says when to try again.
    assert_eq!(refused.headers().get("retry-after").and_then(|value| value.to_str().ok()), Some("1"));
    let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
    let (code, message) = error_of(&body);
    assert_eq!(code, "queue_full");
    assert!(message.contains("the limit is 2") && message.contains("max_queued_inputs"), "{message}");

    gate.add_permits(1);
    events.until("run_finished").await;
    // The finished run's place is free again (its slot is released just after `run_finished`).
    let deadline = Instant::now() + support::PATIENCE;
    loop {
        let (status, body) = server.post(&path, ALICE, r#"{"content":"again"}"#).await;
        if status == 202 {
            break;
        }
        assert_eq!(status, 429, "{body}");
        assert!(Instant::now() < deadline, "the queue never freed a place");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gate.add_permits(2);
    events.until("run_finished").await;
    events.until("run_finished").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_of_threads_walk_every_thread_exactly_once_in_creation_order() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config()).await;
    let mut created = Vec::new();
    for _ in 0..105 {
        created.push(server.create_thread(ALICE, "wait_agent").await);
    }
    server.create_thread(BOB, "wait_agent").await;

    // Without parameters: the first page (100) and a cursor.
    let (status, first) = server.get("/threads", ALICE).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["threads"].as_array().unwrap().len(), 100);
    assert!(first["next"].is_string(), "{}", first["next"]);

    let mut walked = Vec::new();
    let mut path = "/threads?limit=7".to_owned();
    loop {
        let (status, page) = server.get(&path, ALICE).await;
        assert_eq!(status, 200, "{page}");
        let threads = page["threads"].as_array().unwrap();
        assert!(threads.len() <= 7);
        walked.extend(threads.iter().map(|thread| thread["id"].as_str().unwrap().to_owned()));
        match page["next"].as_str() {
            Some(next) => path = format!("/threads?limit=7&cursor={next}"),
            None => break,
        }
    }
    assert_eq!(walked.len(), 105, "every thread of Alice, none of Bob's");
    assert_eq!(walked.iter().collect::<HashSet<_>>().len(), 105, "none twice");
    let mut by_creation = Vec::new();
    for id in &walked {
        let (_, thread) = server.get(&format!("/threads/{id}"), ALICE).await;
        by_creation.push((thread["createdAt"].as_i64().unwrap(), id.clone()));
    }
    assert!(by_creation.windows(2).all(|pair| pair[0] < pair[1]), "oldest first");
    assert_eq!(walked.iter().collect::<HashSet<_>>(), created.iter().collect::<HashSet<_>>());

    for (query, code) in
        [("limit=0", "invalid_query"), ("limit=5000", "invalid_query"), ("cursor=zzz", "invalid_cursor")]
    {
        let (status, body) = server.get(&format!("/threads?{query}"), ALICE).await;
        assert_eq!((status, error_of(&body).0), (400, code), "{query}: {body}");
    }
}

// Paused time: the body's 300 ms and the test's patience are timers of tokio's clock, which jumps
// to the first of them once the server and the client both wait; an answer that needed the
// patience's 30 s would fail the test.
#[tokio::test(start_paused = true)]
async fn a_body_that_does_not_arrive_in_time_gets_408_naming_the_setting() {
    let server =
        Server::start(runtime(0, Arc::new(Semaphore::new(0))), config().body_read_timeout(Duration::from_millis(300)))
            .await;
    let address = server.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address).await.expect("connect");
    let head = format!(
        "POST /threads HTTP/1.1\r\nhost: {address}\r\nauthorization: Bearer {ALICE}\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{{\"agent\""
    );
    socket.write_all(head.as_bytes()).await.expect("write the start of a request");
    let mut answer = Vec::new();
    let read = tokio::time::timeout(support::PATIENCE, async {
        let mut buffer = [0u8; 4096];
        loop {
            let n = socket.read(&mut buffer).await.expect("read the answer");
            answer.extend_from_slice(&buffer[..n]);
            if n == 0 || String::from_utf8_lossy(&answer).contains("body_timeout") {
                return;
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer to a body that never came");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_read_timeout"), "{answer}");
}

/// A server through [`hooks_server::HttpServer`], which counts connections per user, with room
/// for `connections` connections in all.
async fn bounded_server(config: ServerConfig, connections: usize) -> Server {
    let auth = hooks_server::StaticTokens::new([(ALICE, "alice"), (BOB, "bob")]);
    let app = hooks_server::router_with(runtime(0, Arc::new(Semaphore::new(0))), auth, config).expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(hooks_server::HttpServer::new(app).max_connections(connections).serve(listener));
    Server { base, client: reqwest::Client::new() }
}

/// A request on a connection of its own: a new client has an empty pool.
async fn open_stream_alone(server: &Server, path: &str, token: &str) -> reqwest::Response {
    reqwest::Client::new()
        .get(server.url(path))
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_at_its_stream_limit_gets_429_naming_it_and_another_user_still_streams() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config().max_streams_per_user(3)).await;
    let thread = server.create_thread(ALICE, "wait_agent").await;
    let path = format!("/threads/{thread}/events");
    // Thread and user streams count together.
    let held = [
        server.stream(&path, ALICE, None).await,
        server.stream(&path, ALICE, None).await,
        server.stream("/user/events", ALICE, None).await,
    ];
    for refused_path in [path.as_str(), "/user/events"] {
        let refused = server.request(reqwest::Method::GET, refused_path, ALICE).send().await.unwrap();
        assert_eq!(refused.status().as_u16(), 429, "{refused_path}");
        assert_eq!(refused.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
        let body: Value = serde_json::from_str(&refused.text().await.unwrap()).unwrap();
        let (code, message) = error_of(&body);
        assert_eq!(code, "too_many_streams");
        assert!(message.contains("max_streams_per_user") && message.contains('3'), "{message}");
    }
    let mut bob = server.stream("/user/events", BOB, None).await;
    assert_eq!(bob.next().await.kind(), "client_attached");
    drop(held);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_users_connections_never_fill_the_server_for_another() {
    // Room for four connections in all, two of them per user: without the per-user count,
    // Alice's four streams would hold every connection and Bob would get 503.
    let server = bounded_server(config().max_connections_per_user(2), 4).await;
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..4 {
        let response = open_stream_alone(&server, "/user/events", ALICE).await;
        match response.status().as_u16() {
            200 => held.push(response),
            429 => {
                assert_eq!(response.headers().get("connection").and_then(|v| v.to_str().ok()), Some("close"));
                let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
                let (code, message) = error_of(&body);
                assert_eq!(code, "too_many_connections");
                assert!(message.contains("max_connections_per_user"), "{message}");
                refused += 1;
            }
            other => panic!("Alice's stream answered {other}"),
        }
    }
    assert_eq!((held.len(), refused), (2, 2));
    // Alice's refused connections are closed, so Bob's connection is served once the server
    // has let go of them (a 503 before that is the global cap, still full for an instant).
    let bob = tokio::time::timeout(support::PATIENCE, async {
        loop {
            let response = open_stream_alone(&server, "/user/events", BOB).await;
            if response.status().as_u16() != 503 {
                return response;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("Bob is served while Alice holds her streams");
    assert_eq!(bob.status().as_u16(), 200);
    drop(held);
}
