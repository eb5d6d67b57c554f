//! H1 through hooks-server: canary secrets sent through a run over HTTP (the user message,
//! tool arguments, a tool result, a command hook's stdout and stderr, a provider's 500 body)
//! and in bad requests appear in no error body the server answers, in nothing another user
//! receives (their event stream, their listings, their 404s), and in no log line at INFO and
//! above; the provider's body reaches no client at all.

use crate::support::{ALICE, BOB, Server, SseEvent};

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hooks_runtime::Runtime;
use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::model::{OpenAiConfig, OpenAiModel, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_server::ServerConfig;
use serde_json::json;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

define_prompt! {
    name: canary_prompt,
    model: "scripted",
    prompt: "Look things up.",
    tools: ["lookup"],
}

define_agent! {
    name: canary_agent,
    side_a: { prompt: canary_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

define_prompt! { name: provider_prompt, model: "failing-provider", prompt: "Answer." }
define_agent! {
    name: provider_agent,
    side_a: { prompt: provider_prompt, stop_on_response: true },
    side_b: { human: true },
}

/// The canary of one path: unique to this process, so nothing else can hold it.
fn canary(path: &str) -> String {
    format!("CANARY{}x{path}", std::process::id())
}

/// What every canary starts with.
fn canary_prefix() -> String {
    format!("CANARY{}x", std::process::id())
}

/// `text` between single quotes for a shell command, without the canary in the command's own
/// text (`'CANA''RY...'` is `CANARY...` to the shell): a failed hook is logged by its command,
/// which is configuration, not contents.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace("CANARY", "CANA''RY"))
}

/// An OpenAI-compatible provider that answers every request `500` with a canary in its body;
/// its base URL.
async fn failing_provider() -> String {
    let body = json!({"error": {"message": format!("db password {}", canary("provider")), "type": "server_error"}});
    let app = axum::Router::new().fallback(move || {
        let body = body.to_string();
        async move { (axum::http::StatusCode::INTERNAL_SERVER_ERROR, [("content-type", "application/json")], body) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("provider") });
    format!("http://{address}/v1")
}

fn runtime(provider: &str) -> Runtime {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "lookup", &json!({"q": canary("arguments")}).to_string()),
        ScriptedResponse::text(&format!("The answer is {}.", canary("reply"))),
    ]);
    let lookup = FnTool::new("lookup", "Looks a word up.", |_| async { HookToolResult::success(canary("result")) });
    let hook = format!("echo {}; echo {} >&2; exit 1", quoted(&canary("hookstdout")), quoted(&canary("hookstderr")));
    let settings =
        json!({"hooks": {"PreToolUse": [{"matcher": "lookup", "hooks": [{"type": "command", "command": hook}]}]}});
    let failing = OpenAiModel::new(
        OpenAiConfig::new(provider)
            .with_api_key("sk-test-key")
            .with_timeout(Duration::from_secs(10))
            .with_max_retries(0),
    );
    Runtime::builder()
        .agent::<canary_agent>()
        .agent::<provider_agent>()
        .model("scripted", model)
        .model("failing-provider", failing)
        .tool(lookup)
        .settings_hooks(SettingsHooks::from_json_strict(&settings.to_string()).expect("settings"))
        .build()
        .expect("runtime")
}

/// The log lines, as a subscriber writes them.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("logs").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn text(events: &[SseEvent]) -> String {
    events.iter().map(|event| event.data.to_string()).collect::<Vec<_>>().join("\n")
}

/// One thread: the server and every task it spawns run here, so the subscriber set for this
/// thread sees every log line of the run.
#[tokio::test(flavor = "current_thread")]
async fn h1_canaries_sent_over_http_stay_out_of_error_bodies_other_users_streams_and_the_logs() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::registry().with(
        tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
    );
    let guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();

    let provider = failing_provider().await;
    let config = ServerConfig::default().catalog(vec!["canary_agent".into(), "provider_agent".into()]);
    let server = Server::start(runtime(&provider), config).await;
    let mut bob_stream = server.stream("/user/events", BOB, None).await;
    let id = server.create_thread(ALICE, "canary_agent").await;
    let mut alice_stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let body = json!({"content": format!("Look up {}.", canary("user"))}).to_string();
    let (status, accepted) = server.post(&format!("/threads/{id}/messages"), ALICE, &body).await;
    assert_eq!(status, 202, "{accepted}");
    let alice_events = text(&alice_stream.until("run_finished").await);
    // Each path was taken: alice's own stream carries the canaries.
    for path in ["user", "arguments", "result", "reply"] {
        assert!(alice_events.contains(&canary(path)), "`{path}` not in alice's stream: {alice_events}");
    }

    // A provider's 500 body: the run fails, and neither its stream nor the thread quotes it.
    let failing = server.create_thread(ALICE, "provider_agent").await;
    let mut failing_stream = server.stream(&format!("/threads/{failing}/events"), ALICE, None).await;
    let (status, accepted) = server.post(&format!("/threads/{failing}/messages"), ALICE, r#"{"content":"Hi"}"#).await;
    assert_eq!(status, 202, "{accepted}");
    let failed = failing_stream.until("run_finished").await;
    assert_eq!(failed.last().expect("run_finished").data["status"], "failed", "{}", text(&failed));
    let (_, read) = server.get(&format!("/threads/{failing}"), ALICE).await;
    let provider_seen = format!("{}\n{read}", text(&failed));

    // Bad requests carrying canaries: the answers name what is wrong, never the contents.
    let mut errors = Vec::new();
    let broken = format!(r#"{{"content": "{}", "#, canary("broken"));
    let bad = [
        (format!("/threads/{id}/messages"), broken),
        (format!("/threads/{id}/messages"), json!({"content": [canary("wrongtype")]}).to_string()),
        ("/threads".to_owned(), json!({"agent": "canary_agent", "arguments": canary("arguments2")}).to_string()),
    ];
    for (path, body) in bad {
        let (status, answer) = server.post(&path, ALICE, &body).await;
        assert!((400..500).contains(&status), "{path} {body}: {status} {answer}");
        errors.push(answer.to_string());
    }

    // Bob: his own listings and alice's thread (404), then his stream up to a change of his own.
    let mut bob = Vec::new();
    for path in ["/threads".to_owned(), format!("/threads/{id}"), format!("/threads/{id}/messages")] {
        let (status, answer) = server.get(&path, BOB).await;
        bob.push(format!("{path} {status} {answer}"));
    }
    let (bob_sent, answer) = server.post(&format!("/threads/{id}/messages"), BOB, &body).await;
    bob.push(answer.to_string());
    let (status, answer) =
        server.call(reqwest::Method::PUT, "/user/values/marker", BOB, Some(r#"{"value": "end"}"#)).await;
    assert!((200..300).contains(&status), "{status} {answer}");
    bob.push(text(&bob_stream.until("value_changed").await));
    drop(guard);

    let prefix = canary_prefix();
    assert!(!provider_seen.contains(&prefix), "the provider's error body reached the client: {provider_seen}");
    for answer in &errors {
        assert!(!answer.contains(&prefix), "an error body carries a canary: {answer}");
    }
    for seen in &bob {
        assert!(!seen.contains(&prefix), "bob received alice's contents: {seen}");
    }
    assert_eq!(bob_sent, 404, "bob cannot send to alice's thread");
    let logs = String::from_utf8(logs.0.lock().expect("logs").clone()).expect("UTF-8 logs");
    assert!(logs.contains("hook"), "the failing hook was logged: {logs}");
    assert!(logs.contains("HTTP 500"), "the provider answered 500: {logs}");
    assert!(!logs.contains(&prefix), "the logs carry a canary: {logs}");
}
