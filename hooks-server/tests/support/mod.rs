//! A server on 127.0.0.1 for each test, a `reqwest` client, and a small server-sent events reader.
#![allow(dead_code)]

use std::time::Duration;

use hooks_runtime::Runtime;
use hooks_server::{ServerConfig, StaticTokens};
use serde_json::Value;

/// How long any wait for the server lasts before the test fails: generous, for a loaded machine.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// A served router and a client.
pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
}

/// The tokens every test server accepts.
pub(crate) const ALICE: &str = "token-alice";
pub(crate) const BOB: &str = "token-bob";

impl Server {
    /// Serves `runtime` on a free port of 127.0.0.1, with `alice` and `bob` as users.
    pub(crate) async fn start(runtime: Runtime, config: ServerConfig) -> Server {
        let auth = StaticTokens::new([(ALICE, "alice"), (BOB, "bob")]);
        let app = hooks_server::router_with(runtime, auth, config).expect("router");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
        let address = listener.local_addr().expect("local address");
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve") });
        Server { base: format!("http://{address}"), client: reqwest::Client::new() }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with `token` as the bearer token.
    pub(crate) fn request(&self, method: reqwest::Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path)).header("authorization", format!("Bearer {token}"))
    }

    /// Sends a JSON body (as text, so that tests can send broken JSON) and returns status and body.
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<&str>,
    ) -> (u16, Value) {
        let mut request = self.request(method, path, token);
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_owned());
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let value = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).expect("a JSON body") };
        (status, value)
    }

    pub(crate) async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, token, None).await
    }

    pub(crate) async fn post(&self, path: &str, token: &str, body: &str) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, token, Some(body)).await
    }

    /// Creates a thread of `agent` for the token's user and returns its id.
    /// The `arguments_sha256` the listing of thread `thread`'s approvals gives for `call`, or
    /// 64 zeros when the call is not listed (decided, or unknown): what a decision sends (A7).
    pub(crate) async fn listed_sha256(&self, thread: &str, call: &str, token: &str) -> String {
        let (_, listed) = self.get(&format!("/threads/{thread}/approvals"), token).await;
        let calls = listed["approvals"].as_array().cloned().unwrap_or_default();
        let found = calls.iter().find(|listed| listed["id"] == call);
        found.and_then(|listed| listed["arguments_sha256"].as_str()).map_or_else(|| "0".repeat(64), str::to_owned)
    }

    /// Approves `call` of thread `thread` as `token`, sending the hash the listing gives (A7).
    pub(crate) async fn approve_listed(&self, thread: &str, call: &str, token: &str) -> (u16, Value) {
        let sha = self.listed_sha256(thread, call, token).await;
        let body = serde_json::json!({"decision": "approve", "arguments_sha256": sha}).to_string();
        self.post(&format!("/threads/{thread}/approvals/{call}"), token, &body).await
    }

    pub(crate) async fn create_thread(&self, token: &str, agent: &str) -> String {
        let (status, body) = self.post("/threads", token, &format!(r#"{{"agent":"{agent}"}}"#)).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().expect("thread id").to_owned()
    }

    /// Opens an event stream, with `Last-Event-ID` when given.
    pub(crate) async fn stream(&self, path: &str, token: &str, last_event_id: Option<&str>) -> SseReader {
        let mut request = self.request(reqwest::Method::GET, path, token);
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.expect("stream request");
        assert_eq!(response.status().as_u16(), 200, "stream {path}");
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
        assert!(content_type.starts_with("text/event-stream"), "{content_type}");
        SseReader { response, buffer: String::new() }
    }
}

/// One server-sent event: its id (if it had one) and its JSON data.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SseEvent {
    pub(crate) id: Option<String>,
    pub(crate) data: Value,
}

impl SseEvent {
    pub(crate) fn kind(&self) -> &str {
        self.data["type"].as_str().unwrap_or("")
    }
}

/// Reads events from a streaming response: `id:` and `data:` lines up to a blank line;
/// comments (keep-alive) are skipped.
pub(crate) struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    /// The next event; panics after [`PATIENCE`] or when the stream ends.
    pub(crate) async fn next(&mut self) -> SseEvent {
        tokio::time::timeout(PATIENCE, self.next_event())
            .await
            .expect("an event within the patience")
            .expect("the stream did not end")
    }

    /// Events until one of type `kind` (included).
    pub(crate) async fn until(&mut self, kind: &str) -> Vec<SseEvent> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let done = event.kind() == kind;
            events.push(event);
            if done {
                return events;
            }
        }
    }

    async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("id:") {
                        id = Some(value.trim_start().to_owned());
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push_str(value.strip_prefix(' ').unwrap_or(value));
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some(SseEvent { id, data: serde_json::from_str(&data).expect("JSON event data") });
            }
            let chunk = self.response.chunk().await.expect("stream read")?;
            self.buffer.push_str(std::str::from_utf8(&chunk).expect("UTF-8 stream"));
        }
    }
}

/// The process's one `tracing` subscriber, recording the hook runs and timelines of every test's
/// server into one [`HookRuns`](hooks_server::HookRuns) (each run goes to its own thread's stream).
pub(crate) fn hook_runs() -> hooks_server::HookRuns {
    use tracing_subscriber::layer::SubscriberExt;
    static RUNS: std::sync::OnceLock<hooks_server::HookRuns> = std::sync::OnceLock::new();
    RUNS.get_or_init(|| {
        let runs = hooks_server::HookRuns::new();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(runs.layer()))
            .expect("one subscriber");
        runs
    })
    .clone()
}
