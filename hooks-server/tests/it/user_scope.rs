//! The user event stream over real HTTP: a connection is a client of its user. Opening it runs
//! `user_client_attached`, and its end, whether the client closes it or the connection just
//! drops, runs `user_client_detached`, each exactly once. `PUT` of a user value runs
//! `user_value_changed`. Each test has its own user, and looks only at what the hooks recorded
//! for that user.

use crate::support;

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use hooks_runtime::Runtime;
use hooks_runtime::model::ScriptedModel;
use hooks_runtime::prelude::*;
use hooks_runtime::types::UserEvent;
use hooks_server::{ServerConfig, StaticTokens};
use reqwest::Method;
use serde_json::json;
use support::{PATIENCE, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the user-scope hooks saw: (user, event).
static SEEN: Mutex<Vec<(String, UserEvent)>> = Mutex::new(Vec::new());

fn record(user: &UserState) {
    SEEN.lock().unwrap_or_else(PoisonError::into_inner).push((user.user_id.clone(), user.event.clone()));
}

#[hook(user_client_attached, id = "server_attached")]
fn attached(user: &UserState) {
    record(user);
}

#[hook(user_client_detached, id = "server_detached")]
async fn detached(user: &UserState) {
    record(user);
}

#[hook(user_value_changed, id = "server_value_changed")]
fn value_changed(user: &UserState) {
    record(user);
}

define_prompt! { name: idle_prompt, model: "scripted", prompt: "Idle." }
define_agent! { name: idle_agent, side_a: { prompt: idle_prompt, stop_on_response: true } }

fn seen_by(user: &str) -> Vec<UserEvent> {
    SEEN.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .filter(|(id, _)| id == user)
        .map(|(_, event)| event.clone())
        .collect()
}

/// A server whose token `token-<user>` is `user`, with a short keep-alive so that a connection
/// that vanished without a word is noticed at the next write.
async fn server(users: &[&str]) -> Server {
    server_with(users, ServerConfig::default().keep_alive(Duration::from_millis(300))).await
}

async fn server_with(users: &[&str], config: ServerConfig) -> Server {
    let runtime = Runtime::builder().agent::<idle_agent>().model("scripted", ScriptedModel::default()).build().unwrap();
    let auth = StaticTokens::new(users.iter().map(|user| (format!("token-{user}"), (*user).to_owned())));
    let app = hooks_server::router_with(runtime, auth, config).expect("router");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Server { base: format!("http://{address}"), client: reqwest::Client::new() }
}

/// Waits until `user`'s hooks have seen `count` events.
async fn wait_for(user: &str, count: usize) -> Vec<UserEvent> {
    let started = Instant::now();
    loop {
        let seen = seen_by(user);
        if seen.len() >= count || started.elapsed() > PATIENCE {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn attach(client: &str) -> UserEvent {
    UserEvent::ClientAttached { client_id: client.to_owned() }
}

fn detach(client: &str) -> UserEvent {
    UserEvent::ClientDetached { client_id: client.to_owned() }
}

// Paused time: the keep-alive writes are timers of tokio's clock, which jumps from one to the
// next whenever the server and the client both wait, so "several keep-alive periods later"
// takes no wall-clock time and comes after whatever the first periods brought.
#[tokio::test(start_paused = true)]
async fn u1_opening_and_closing_the_user_stream_attaches_and_detaches_once() {
    let user = "u1-closing";
    let server = server(&[user]).await;
    let token = format!("token-{user}");
    let mut stream = server.stream("/user/events", &token, None).await;
    // The hooks ran before the response started; the stream's first event names the client.
    let hello = stream.next().await;
    assert_eq!(hello.kind(), "client_attached");
    let client = hello.data["clientId"].as_str().unwrap().to_owned();
    assert_eq!(seen_by(user), [attach(&client)]);

    drop(stream);
    assert_eq!(wait_for(user, 2).await, [attach(&client), detach(&client)]);
    // Several keep-alive periods later (on tokio's paused clock), still once each.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(seen_by(user), [attach(&client), detach(&client)]);
}

// Paused time: the keep-alive writes are timers of tokio's clock, which jumps from one to the
// next whenever the server and the client both wait, so "several keep-alive periods later"
// takes no wall-clock time and comes after whatever the first periods brought.
#[tokio::test(start_paused = true)]
async fn u1_a_dropped_connection_detaches_its_client_once() {
    let user = "u1-dropped";
    let server = server(&[user]).await;
    // A raw connection that reads the response head and then vanishes: no close of the
    // stream, no HTTP-level goodbye.
    let address = server.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    let request = format!(
        "GET /user/events HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer token-{user}\r\nAccept: text/event-stream\r\n\r\n"
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut head = vec![0_u8; 4096];
    let read = tokio::time::timeout(PATIENCE, socket.read(&mut head)).await.unwrap().unwrap();
    let head = String::from_utf8_lossy(&head[..read]).into_owned();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let attached = wait_for(user, 1).await;
    let [UserEvent::ClientAttached { client_id }] = attached.as_slice() else { panic!("{attached:?}") };
    let client = client_id.clone();
    // Reset rather than a graceful close: the server learns only at its next write.
    socket.set_zero_linger().unwrap();
    drop(socket);

    assert_eq!(wait_for(user, 2).await, [attach(&client), detach(&client)]);
    // Several keep-alive periods later (on tokio's paused clock), still once each.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(seen_by(user), [attach(&client), detach(&client)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u1_each_connection_is_its_own_client_and_sees_the_others() {
    let user = "u1-two-clients";
    let server = server(&[user, "u1-stranger"]).await;
    let token = format!("token-{user}");
    let mut phone = server.stream("/user/events", &token, None).await;
    let phone_id = phone.next().await.data["clientId"].as_str().unwrap().to_owned();
    let mut laptop = server.stream("/user/events", &token, None).await;
    let laptop_attached = phone.next().await;
    assert_eq!(laptop_attached.kind(), "client_attached");
    let laptop_id = laptop_attached.data["clientId"].as_str().unwrap().to_owned();
    assert_ne!(phone_id, laptop_id);
    assert_eq!(laptop.next().await, laptop_attached, "the new client's stream starts with its own attach");

    // Another user's connection is not this user's client, and its events do not show here.
    let stranger = server.stream("/user/events", "token-u1-stranger", None).await;
    drop(laptop);
    let detached = phone.next().await;
    assert_eq!(detached.data, json!({ "type": "client_detached", "clientId": laptop_id }));
    assert_eq!(wait_for(user, 3).await, [attach(&phone_id), attach(&laptop_id), detach(&laptop_id)]);
    drop(stranger);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn u1_setting_a_user_value_runs_user_value_changed_and_reaches_the_stream() {
    let user = "u1-values";
    let server = server(&[user, "u1-other"]).await;
    let token = format!("token-{user}");
    let mut stream = server.stream("/user/events", &token, None).await;
    stream.next().await; // its own attach

    let (status, body) = server.call(Method::PUT, "/user/values/theme", &token, Some(r#""dark""#)).await;
    assert_eq!(status, 204, "{body}");
    let changed = stream.next().await;
    assert_eq!(changed.data, json!({ "type": "value_changed", "key": "theme", "value": "dark" }));
    let (status, body) = server.get("/user/values/theme", &token).await;
    assert_eq!((status, &body["key"], &body["value"]), (200, &json!("theme"), &json!("dark")), "{body}");
    assert!(body["updatedAt"].as_i64().is_some_and(|at| at > 1_700_000_000_000), "{body}");
    // Values are per user: the other user has none, and their PUT is theirs alone.
    let (status, body) = server.get("/user/values/theme", "token-u1-other").await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("value_not_found")));

    let (status, _) = server.call(Method::DELETE, "/user/values/theme", &token, None).await;
    assert_eq!(status, 204);
    assert_eq!(stream.next().await.data, json!({ "type": "value_changed", "key": "theme", "value": null }));
    let events = wait_for(user, 3).await;
    let changes: Vec<&UserEvent> = events.iter().filter(|e| matches!(e, UserEvent::ValueChanged { .. })).collect();
    assert_eq!(
        changes,
        [
            &UserEvent::ValueChanged { key: "theme".into(), old: None, new: Some(json!("dark")) },
            &UserEvent::ValueChanged { key: "theme".into(), old: Some(json!("dark")), new: None },
        ]
    );
    let (status, body) = server.call(Method::PUT, "/user/values/theme", &token, Some("{nope")).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_json")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_stream_resumes_after_last_event_id() {
    let user = "u1-resume";
    let server = server(&[user]).await;
    let token = format!("token-{user}");
    let mut stream = server.stream("/user/events", &token, None).await;
    let hello = stream.next().await;
    drop(stream);
    wait_for(user, 2).await; // the detach hook ran
    for value in ["1", "2"] {
        server.call(Method::PUT, "/user/values/n", &token, Some(value)).await;
    }
    let mut resumed = server.stream("/user/events", &token, hello.id.as_deref()).await;
    let mut kinds = Vec::new();
    for _ in 0..4 {
        let event = resumed.next().await;
        kinds.push((event.kind().to_owned(), event.data.get("value").cloned()));
    }
    // Missed while away: its own detach and both changes, in their order, each once; then the
    // new connection's attach. (The detach is logged when the server notices the closed
    // connection, which may come after the first change.)
    let changes: Vec<_> = kinds.iter().filter(|(kind, _)| kind == "value_changed").map(|(_, v)| v.clone()).collect();
    assert_eq!(changes, [Some(json!(1)), Some(json!(2))], "{kinds:?}");
    assert_eq!(kinds.iter().filter(|(kind, _)| kind == "client_detached").count(), 1, "{kinds:?}");
    assert_eq!(kinds.last(), Some(&("client_attached".to_owned(), None)), "{kinds:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_values_past_the_quotas_are_refused_naming_the_limit() {
    let config = ServerConfig::default().max_user_values(2).max_user_value_bytes(16);
    let server = server_with(&["quota", "other"], config).await;
    let put = |key: &'static str, body: &'static str| {
        let path = format!("/user/values/{key}");
        let server = &server;
        async move { server.call(Method::PUT, &path, "token-quota", Some(body)).await }
    };

    let (status, body) = put("big", r#""a string longer than sixteen""#).await;
    assert_eq!((status, body["error"]["code"].as_str()), (413, Some("user_value_too_large")), "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("16 bytes") && message.contains("max_user_value_bytes"), "{message}");
    assert!(!message.contains("sixteen"), "the value is not echoed: {message}");

    assert_eq!(put("a", "1").await.0, 204);
    assert_eq!(put("b", "2").await.0, 204);
    let (status, body) = put("c", "3").await;
    assert_eq!((status, body["error"]["code"].as_str()), (429, Some("too_many_user_values")), "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("2 user values") && message.contains("max_user_values"), "{message}");
    assert_eq!(server.get("/user/values/c", "token-quota").await.0, 404, "nothing stored");

    assert_eq!(put("a", "10").await.0, 204, "overwriting a key at the limit works");
    assert_eq!(server.call(Method::DELETE, "/user/values/b", "token-quota", None).await.0, 204);
    assert_eq!(put("c", "3").await.0, 204, "after a delete there is room");
    let (_, listed) = server.get("/user/values", "token-quota").await;
    let keys: Vec<&str> = listed["values"].as_array().unwrap().iter().map(|v| v["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["a", "c"], "{listed}");
    assert_eq!(
        server.call(Method::PUT, "/user/values/a", "token-other", Some("1")).await.0,
        204,
        "quotas are per user"
    );
}
