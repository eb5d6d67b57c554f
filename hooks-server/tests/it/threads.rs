//! Threads over real HTTP: create, send, the event stream and its order, resuming with
//! `Last-Event-ID`, one user never seeing another's threads, and clear 4xx errors that never
//! carry message contents.

use crate::support;
use crate::watched_store::WatchedStore;

use std::sync::Arc;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use reqwest::Method;
use serde_json::{Value, json};
use support::{ALICE, BOB, Server, SseEvent};
use tokio::sync::Semaphore;

define_prompt! {
    name: lookup_prompt,
    model: "scripted",
    prompt: "Look things up.",
    tools: ["lookup"],
}

define_agent! {
    name: lookup_agent,
    side_a: { prompt: lookup_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// A runtime whose model calls `lookup` once (with a progress argument) and then answers; the
/// tool waits for a permit from `gate`, so a test decides when the run goes on.
fn runtime(runs: usize, gate: Arc<Semaphore>) -> Runtime {
    let mut script = Vec::new();
    for _ in 0..runs {
        script.push(ScriptedResponse::tool_call("call_1", "lookup", r#"{"query":"Looking up the weather","n":1}"#));
        script.push(ScriptedResponse::text("It is sunny."));
    }
    Runtime::builder()
        .agent::<lookup_agent>()
        .model("scripted", ScriptedModel::new(script))
        .tool(
            FnTool::new("lookup", "Looks a thing up.", move |_args| {
                let gate = gate.clone();
                async move {
                    gate.acquire().await.expect("gate open").forget();
                    HookToolResult::success("found it")
                }
            })
            .with_progress_argument("query"),
        )
        .build()
        .expect("runtime")
}

fn config() -> ServerConfig {
    ServerConfig::default().catalog(vec!["lookup_agent".into()])
}

fn kinds(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(SseEvent::kind).collect()
}

fn position(events: &[SseEvent], predicate: impl Fn(&SseEvent) -> bool) -> usize {
    events.iter().position(predicate).unwrap_or_else(|| panic!("no such event in {:#?}", kinds(events)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_send_and_stream_in_order() {
    let gate = Arc::new(Semaphore::new(1));
    let server = Server::start(runtime(1, gate), config()).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    let (status, thread) = server.get(&format!("/threads/{id}"), ALICE).await;
    assert_eq!(status, 200, "{thread}");
    assert_eq!(
        (thread["agent"].as_str(), thread["userId"].as_str(), thread["status"].as_str()),
        (Some("lookup_agent"), Some("alice"), Some("idle"))
    );

    let mut stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let (status, accepted) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Weather?"}"#).await;
    assert_eq!(status, 202, "{accepted}");
    let run_id = accepted["runId"].as_str().expect("run id").to_owned();

    let events = stream.until("run_finished").await;
    let mut run_started = events[0].data.clone();
    let at = run_started.as_object_mut().unwrap().remove("atUs");
    assert!(at.is_some_and(|at| at.is_u64()), "a start time: {:?}", events[0]);
    assert_eq!(run_started, json!({ "type": "run_started", "runId": run_id }));
    let started = position(&events, |e| e.kind() == "tool_call_started");
    let done = position(&events, |e| e.kind() == "tool_call_done");
    let tool_message = position(&events, |e| e.kind() == "message_created" && e.data["role"] == "tool");
    assert!(started < done && done < tool_message, "order: {:?}", kinds(&events));
    assert_eq!(
        events[started].data,
        json!({ "type": "tool_call_started", "id": "call_1", "name": "lookup", "progress": "Looking up the weather" })
    );
    assert_eq!(events[done].data["status"], "success");
    assert_eq!(events[tool_message].data["message"]["tool_call_id"], "call_1");
    assert_eq!(events[tool_message].data["message"]["content"], "found it");
    let finished = events.last().expect("run_finished");
    assert_eq!(
        (finished.data["runId"].as_str(), finished.data["status"].as_str()),
        (Some(run_id.as_str()), Some("idle"))
    );
    // Ids count up by one from the first event of the stream.
    let ids: Vec<u64> = events.iter().map(|e| e.id.as_deref().expect("an id").parse().expect("numeric id")).collect();
    assert!(ids.windows(2).all(|pair| pair[1] == pair[0] + 1), "{ids:?}");

    let (status, body) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    assert_eq!(status, 200);
    let roles: Vec<&str> = body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    let (_, last_two) = server.get(&format!("/threads/{id}/messages?limit=2"), ALICE).await;
    assert_eq!(last_two["messages"].as_array().unwrap().len(), 2);
    assert_eq!(last_two["messages"][1]["content"], "It is sunny.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_with_last_event_id_resumes_with_no_gap_and_no_duplicate() {
    let gate = Arc::new(Semaphore::new(0));
    let server = Server::start(runtime(1, gate.clone()), config()).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    let path = format!("/threads/{id}/events");

    let mut first = server.stream(&path, ALICE, None).await;
    let (status, _) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Weather?"}"#).await;
    assert_eq!(status, 202);
    // The tool waits at the gate: the connection drops in the middle of the run.
    let before = first.until("tool_call_started").await;
    drop(first);
    gate.add_permits(1);
    // Events go on while the client is away: a third client, from the beginning, sees the run
    // to its end.
    let mut replay = server.stream(&path, ALICE, Some("0")).await;
    let replayed = replay.until("run_finished").await;
    let last_seen = before.last().and_then(|e| e.id.clone()).expect("an id");
    let mut second = server.stream(&path, ALICE, Some(&last_seen)).await;
    let after = second.until("run_finished").await;

    let seen: Vec<SseEvent> = before.into_iter().chain(after).collect();
    let ids: Vec<u64> = seen.iter().map(|e| e.id.as_deref().unwrap().parse().unwrap()).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>(), "every event once, in order");
    // The one that started from the beginning saw exactly the same events.
    assert_eq!(replayed, seen);
    assert!(kinds(&seen).contains(&"tool_call_done") && kinds(&seen).contains(&"status"), "{:?}", kinds(&seen));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resuming_past_the_retention_is_told_what_it_lost() {
    let gate = Arc::new(Semaphore::new(1));
    let config = config().event_retention(3);
    let server = Server::start(runtime(1, gate), config).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    let path = format!("/threads/{id}/events");
    let mut stream = server.stream(&path, ALICE, None).await;
    server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Weather?"}"#).await;
    let all = stream.until("run_finished").await;
    let last: u64 = all.last().unwrap().id.as_deref().unwrap().parse().unwrap();
    assert!(last > 4, "enough events to overflow the retention: {:?}", kinds(&all));

    let mut late = server.stream(&path, ALICE, Some("1")).await;
    let notice = late.next().await;
    assert_eq!(notice.id, None, "the notice carries no id");
    // Ids 2 to `last - 3` are gone: the events after the client's id 1 and before the 3 kept.
    assert_eq!(notice.data, json!({ "type": "events_lost", "count": last - 4 }));
    let kept: Vec<SseEvent> = vec![late.next().await, late.next().await, late.next().await];
    assert_eq!(kept, all[all.len() - 3..].to_vec());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_cannot_see_another_users_threads_by_id_or_by_listing() {
    let gate = Arc::new(Semaphore::new(1));
    let server = Server::start(runtime(1, gate), config()).await;
    let alices = server.create_thread(ALICE, "lookup_agent").await;
    let bobs = server.create_thread(BOB, "lookup_agent").await;

    let (_, listed) = server.get("/threads", BOB).await;
    let ids: Vec<&str> = listed["threads"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [bobs.as_str()]);
    let (_, listed) = server.get("/threads", ALICE).await;
    let ids: Vec<&str> = listed["threads"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [alices.as_str()]);

    let missing = "thread_does_not_exist";
    for (method, suffix, body) in [
        (Method::GET, "", None),
        (Method::GET, "/messages", None),
        (Method::POST, "/messages", Some(r#"{"content":"let me in"}"#)),
        (Method::GET, "/events", None),
    ] {
        let (status, theirs) = server.call(method.clone(), &format!("/threads/{alices}{suffix}"), BOB, body).await;
        let (missing_status, absent) =
            server.call(method.clone(), &format!("/threads/{missing}{suffix}"), BOB, body).await;
        assert_eq!((status, missing_status), (404, 404), "{method} {suffix}: {theirs}");
        // The same answer as for a thread that does not exist, but for the id it names.
        assert_eq!(theirs["error"]["code"], absent["error"]["code"]);
        let message = theirs["error"]["message"].as_str().unwrap();
        assert_eq!(message.replace(&alices, missing), absent["error"]["message"].as_str().unwrap());
    }
    // Bob's attempt to send left no message in Alice's thread.
    let (_, messages) = server.get(&format!("/threads/{alices}/messages"), ALICE).await;
    assert_eq!(messages["messages"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_lists_the_users_threads_from_the_store() {
    let store: Arc<dyn MessageStore> = Arc::new(InMemoryStore::new());
    let on_store = |store: &Arc<dyn MessageStore>| {
        Runtime::builder()
            .agent::<lookup_agent>()
            .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hello.")]))
            .tool(FnTool::new("lookup", "Looks a thing up.", |_args| async { HookToolResult::success("found") }))
            .store(store.clone())
            .build()
            .expect("runtime")
    };
    let first = Server::start(on_store(&store), config()).await;
    let older = first.create_thread(ALICE, "lookup_agent").await;
    let bobs = first.create_thread(BOB, "lookup_agent").await;
    let newer = first.create_thread(ALICE, "lookup_agent").await;
    let mut events = first.stream(&format!("/threads/{older}/events"), ALICE, None).await;
    first.post(&format!("/threads/{older}/messages"), ALICE, r#"{"content":"hi"}"#).await;
    events.until("run_finished").await;

    // Another server on the same store (a restart, or another process) has opened none of them.
    let second = Server::start(on_store(&store), config()).await;
    let (status, listed) = second.get("/threads", ALICE).await;
    assert_eq!(status, 200, "{listed}");
    let threads = listed["threads"].as_array().unwrap();
    let ids: Vec<&str> = threads.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [older.as_str(), newer.as_str()], "oldest first, Bob's left out");
    assert_eq!(
        (threads[0]["agent"].as_str(), threads[0]["userId"].as_str(), threads[0]["status"].as_str()),
        (Some("lookup_agent"), Some("alice"), Some("idle"))
    );
    assert_eq!(threads[0]["lastEventId"], "0", "no event of it on this server yet");
    let (_, listed) = second.get("/threads", BOB).await;
    assert_eq!(listed["threads"].as_array().unwrap().len(), 1);
    assert_eq!(listed["threads"][0]["id"], bobs.as_str());
    // Listed, and readable: the history is the store's.
    let (status, messages) = second.get(&format!("/threads/{older}/messages"), ALICE).await;
    assert_eq!(status, 200, "{messages}");
    let contents: Vec<&str> =
        messages["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["hi", "Hello."]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_a_valid_token_are_unauthorized() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config()).await;
    let response = server.client.get(server.url("/threads")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let (status, body) = server.get("/threads", "not-a-token").await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized");
}

define_prompt! { name: greeting_prompt, model: "scripted", prompt: "You help {{customer}}." }
define_agent! { name: greeting_agent, side_a: { prompt: greeting_prompt, stop_on_response: true }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_placeholder_without_its_argument_is_a_400_naming_both() {
    let runtime = Runtime::builder()
        .agent::<greeting_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hello, Bob.")]))
        .build()
        .expect("runtime");
    let server = Server::start(runtime, ServerConfig::default()).await;
    // The catalog names the arguments a client must send.
    let (_, agent) = server.get("/agents/greeting_agent", ALICE).await;
    assert_eq!(agent["arguments"], json!(["customer"]), "{agent}");
    let message =
        refused(&server, Method::POST, "/threads", r#"{"agent": "greeting_agent"}"#, 400, "missing_argument").await;
    assert_eq!(
        message,
        "prompt `greeting_prompt` of agent `greeting_agent` uses `{{customer}}`; add `\"customer\"` to the request's `arguments`"
    );
    let (status, thread) =
        server.post("/threads", ALICE, r#"{"agent": "greeting_agent", "arguments": {"customer": "Bob"}}"#).await;
    assert_eq!(status, 201, "{thread}");
    assert_eq!(thread["arguments"], json!({ "customer": "Bob" }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_parameters_are_camel_case_and_the_snake_case_spelling_is_refused_by_name() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config()).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    let (status, body) = server.get(&format!("/threads/{id}/messages?includeSilent=true&limit=5"), ALICE).await;
    assert_eq!((status, body["messages"].as_array().map(Vec::len)), (200, Some(0)), "{body}");
    let message =
        refused(&server, Method::GET, &format!("/threads/{id}/messages?include_silent=true"), "", 400, "invalid_query")
            .await;
    assert!(message.contains("`include_silent` is spelled `includeSilent`"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_authorization_scheme_is_case_insensitive() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config()).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let response =
            server.client.get(server.url("/threads")).header("authorization", format!("{scheme} {ALICE}")).send().await;
        assert_eq!(response.unwrap().status().as_u16(), 200, "`{scheme}` is the bearer scheme");
    }
    let response = server.client.get(server.url("/threads")).header("authorization", format!("Basic {ALICE}")).send();
    assert_eq!(response.await.unwrap().status().as_u16(), 401, "another scheme is not");
}

/// Sends a request and checks the status and error code; returns the error message, which
/// must not contain `SECRET`.
async fn refused(server: &Server, method: Method, path: &str, body: &str, status: u16, code: &str) -> String {
    let (got, answer) = server.call(method, path, ALICE, Some(body)).await;
    assert_eq!((got, answer["error"]["code"].as_str()), (status, Some(code)), "{answer}");
    let text = answer.to_string();
    assert!(!text.contains("SECRET"), "an error leaked the request's contents: {text}");
    answer["error"]["message"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_4xx_that_never_carries_contents() {
    let config = config().max_body_bytes(4096).max_message_bytes(1024);
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    let send = format!("/threads/{id}/messages");

    let message = refused(
        &server,
        Method::POST,
        "/threads",
        r#"{"agent": "nope", "arguments": {"a": "SECRET"}}"#,
        400,
        "unknown_agent",
    )
    .await;
    assert!(message.contains("`nope`") && message.contains("`lookup_agent`"), "{message}");
    let message = refused(
        &server,
        Method::POST,
        "/threads",
        r#"{"agent": "lookup_agent", "arguments": "SECRET"}"#,
        400,
        "invalid_field",
    )
    .await;
    assert!(message.contains("`arguments`") && message.contains("an object"), "{message}");
    let message = refused(&server, Method::POST, &send, r#"{"content": "SECRET", "#, 400, "invalid_json").await;
    assert!(message.contains("not valid JSON") && message.contains("line 1"), "{message}");
    refused(&server, Method::POST, &send, "", 400, "invalid_json").await;
    let message = refused(&server, Method::POST, &send, r#"{"content": ["SECRET"]}"#, 400, "invalid_field").await;
    assert!(message.contains("`content`") && message.contains("an array"), "{message}");
    let message = refused(&server, Method::POST, &send, r#"{"text": "SECRET"}"#, 400, "missing_field").await;
    assert!(message.contains("`content`"), "{message}");
    let message =
        refused(&server, Method::POST, &send, r#"{"content": "hi", "role": "SECRET"}"#, 400, "unknown_field").await;
    assert!(message.contains("`role`") && message.contains("`content`"), "{message}");
    refused(&server, Method::POST, &send, r#""SECRET""#, 400, "invalid_body").await;

    let long = format!(r#"{{"content": "SECRET{}"}}"#, "x".repeat(2000));
    let message = refused(&server, Method::POST, &send, &long, 413, "message_too_large").await;
    assert!(message.contains("2006 bytes") && message.contains("1024 bytes"), "{message}");
    let huge = format!(r#"{{"content": "SECRET{}"}}"#, "x".repeat(10_000));
    let message = refused(&server, Method::POST, &send, &huge, 413, "body_too_large").await;
    assert!(message.contains("4096 bytes"), "{message}");

    let (status, body) = server.get(&format!("/threads/{id}/messages?limit=lots"), ALICE).await;
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("invalid_query")), "{body}");
    let response = server
        .request(Method::GET, &format!("/threads/{id}/events"), ALICE)
        .header("last-event-id", "SECRET")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let body: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "invalid_last_event_id");
    // Nothing was stored by any of the refused sends.
    let (_, messages) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    assert_eq!(messages["messages"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_catalog_is_explain_json() {
    let runtime = runtime(0, Arc::new(Semaphore::new(0)));
    let mut expected = hooks_runtime::explain_json(runtime.agent("lookup_agent").unwrap().resolved());
    // With the names of the prompts' `{{name}}` arguments: none here.
    expected["arguments"] = json!([]);
    let server = Server::start(runtime, config()).await;
    let (status, catalog) = server.get("/agents", ALICE).await;
    assert_eq!(status, 200);
    assert_eq!(catalog["agents"], json!([expected.clone()]));
    let (status, one) = server.get("/agents/lookup_agent", ALICE).await;
    assert_eq!((status, one), (200, expected));
    let (status, body) = server.get("/agents/nope", ALICE).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("agent_not_found")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_catalog_configured_every_agent_of_the_runtime_is_listed() {
    let runtime = runtime(0, Arc::new(Semaphore::new(0)));
    let mut expected = hooks_runtime::explain_json(runtime.agent("lookup_agent").unwrap().resolved());
    expected["arguments"] = json!([]);
    let server = Server::start(runtime, ServerConfig::default()).await;
    let (status, catalog) = server.get("/agents", ALICE).await;
    assert_eq!((status, catalog["agents"].clone()), (200, json!([expected])));
}

#[cfg(feature = "inspector")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_page_is_served_without_data_and_fetches_with_the_viewers_token() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config()).await;
    // No token needed for the page itself: it holds no data.
    let response = server.client.get(server.url("/inspect")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
    let policy = response.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    let page = response.text().await.unwrap();
    // What it fetches, relative to where the router is mounted, with the viewer's token.
    for needle in
        [r#"call("GET", "agents")"#, r#""threads/" + encodeURIComponent"#, "/events", "Last-Event-ID", "Authorization"]
    {
        assert!(page.contains(needle), "the page lacks {needle}");
    }
    assert!(!page.contains("innerHTML"), "contents are shown as text, never parsed as HTML");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_endpoints_and_methods_get_json_errors() {
    let server = Server::start(runtime(0, Arc::new(Semaphore::new(0))), config()).await;
    let (status, body) = server.get("/threadz", ALICE).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("no_such_endpoint")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("GET /threadz"));
    let (status, body) = server.call(Method::DELETE, "/threads", ALICE, None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (405, Some("method_not_allowed")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_stops_the_run_before_its_next_step() {
    let gate = Arc::new(Semaphore::new(0));
    let server = Server::start(runtime(1, gate.clone()), config()).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    // An idle thread has nothing to stop: a 409 that says so, not a 202.
    let (status, body) = server.post(&format!("/threads/{id}/abort"), ALICE, "").await;
    assert_eq!((status, body["error"]["code"].as_str()), (409, Some("not_running")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("status `idle`"), "{body}");
    let mut stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Weather?"}"#).await;
    stream.until("tool_call_started").await;
    // Another user cannot abort it.
    let (status, _) = server.post(&format!("/threads/{id}/abort"), BOB, "").await;
    assert_eq!(status, 404);
    let (status, _) = server.post(&format!("/threads/{id}/abort"), ALICE, "").await;
    assert_eq!(status, 202);
    gate.add_permits(1);
    let events = stream.until("run_finished").await;
    let finished = &events.last().unwrap().data;
    assert_eq!(
        (finished["status"].as_str(), finished["reason"].as_str()),
        (Some("stopped"), Some("aborted")),
        "{events:#?}"
    );
    assert!(!events.iter().any(|e| e.kind() == "message_created"
        && e.data["role"] == "assistant"
        && e.data["message"]["content"] == "It is sunny."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_event_id_past_the_end_resets_the_stream_to_its_start() {
    let gate = Arc::new(Semaphore::new(1));
    let server = Server::start(runtime(1, gate), config()).await;
    let id = server.create_thread(ALICE, "lookup_agent").await;
    let path = format!("/threads/{id}/events");
    let mut first = server.stream(&path, ALICE, None).await;
    server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Weather?"}"#).await;
    let all = first.until("run_finished").await;

    // An id from an earlier server process, past this stream's end.
    let mut stale = server.stream(&path, ALICE, Some("999")).await;
    let reset = stale.next().await;
    assert_eq!((reset.id.as_deref(), reset.kind()), (None, "stream_reset"), "{reset:?}");
    assert_eq!(reset.data["latest"], all.last().unwrap().id.clone().unwrap());
    assert_eq!(stale.until("run_finished").await, all, "then every event kept, from the start");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_for_another_users_thread_does_the_same_store_work_as_for_an_unknown_id() {
    let store = Arc::new(WatchedStore::default());
    let runtime = Runtime::builder()
        .agent::<lookup_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Hello.")]))
        .tool(FnTool::new("lookup", "Looks a thing up.", |_args| async { HookToolResult::success("found") }))
        .store(store.clone())
        .build()
        .expect("runtime");
    let server = Server::start(runtime, config()).await;
    // Alice's thread is open in this server's memory, where a shortcut would answer at once.
    let alices = server.create_thread(ALICE, "lookup_agent").await;
    assert_eq!(server.get(&format!("/threads/{alices}"), ALICE).await.0, 200);
    let loads = || store.loads.load(std::sync::atomic::Ordering::SeqCst);
    for suffix in ["", "/messages", "/events"] {
        let before = loads();
        let (status, _) = server.get(&format!("/threads/{alices}{suffix}"), BOB).await;
        let theirs = loads() - before;
        let before = loads();
        let (missing_status, _) = server.get(&format!("/threads/thread_does_not_exist{suffix}"), BOB).await;
        let unknown = loads() - before;
        assert_eq!((status, missing_status), (404, 404), "{suffix}");
        assert_eq!(theirs, unknown, "{suffix}: store reads for another user's thread and for an unknown id");
        assert!(unknown >= 1, "{suffix}: an unknown id is looked up in the store");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_catalog_naming_an_unknown_agent_is_refused_when_the_router_is_built() {
    let config = ServerConfig::default().catalog(vec!["lookup_agent".into(), "lookup_agnet".into()]);
    let auth = hooks_server::StaticTokens::new([(ALICE, "alice")]);
    let Err(error) = hooks_server::router_with(runtime(0, Arc::new(Semaphore::new(0))), auth, config) else {
        panic!("a catalog with a typo built a router");
    };
    assert_eq!(
        error,
        hooks_server::ConfigError::UnknownCatalogAgent {
            name: "lookup_agnet".into(),
            known: vec!["lookup_agent".into()]
        }
    );
    assert_eq!(
        error.to_string(),
        "`ServerConfig::catalog` names `lookup_agnet`, which is no agent of the runtime; its agents are: `lookup_agent`"
    );
}
