//! A6 over real HTTP: a thread's owner lists the tool calls that wait for approval and decides
//! them; the decision resumes the turn in the background with its events on the thread's
//! stream; anyone else gets the 404 of a missing thread; second decisions, bad bodies and
//! arguments the tool's schema refuses are 4xx naming what was wrong; edited arguments a hook
//! denies are 409 with its reason (G8); a message while calls wait is 409 naming them.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_server::ServerConfig;
use serde_json::{Value, json};
use support::{ALICE, BOB, Server, SseEvent, SseReader};

#[hook(before_tool_call, id = "payment_limit", on_failure = deny)]
fn payment_limit(_state: &ThreadState, call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    if call.name() == "pay" { ToolDecision::ask("payments need a person") } else { ToolDecision::allow() }
}

/// Payments over 1000 never run, edited on approval or not (G8).
#[hook(before_tool_call, id = "payment_cap", on_failure = deny)]
fn payment_cap(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    if arguments["amount"].as_f64().unwrap_or(0.0) > 1000.0 {
        ToolDecision::deny("payments over 1000 are refused")
    } else {
        ToolDecision::allow()
    }
}

define_prompt! {
    name: pay_prompt,
    model: "scripted",
    prompt: "Pay what is asked.",
    tools: ["pay"],
    hooks: [payment_limit, payment_cap],
}

define_agent! {
    name: pay_agent,
    side_a: { prompt: pay_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// A runtime whose model answers with `first` (its tool calls) and then "Paid."; `pay` counts
/// its runs and takes `{"amount": number, "to": string}`.
fn runtime(first: ScriptedResponse, runs: Arc<AtomicUsize>) -> Runtime {
    scripted_runtime(vec![first, ScriptedResponse::text("Paid.")], runs)
}

/// A runtime whose model answers with `responses` in turn; `pay` as [`runtime`]'s.
fn scripted_runtime(responses: Vec<ScriptedResponse>, runs: Arc<AtomicUsize>) -> Runtime {
    let pay = FnTool::new("pay", "Pays someone.", move |arguments: Value| {
        let runs = runs.clone();
        async move {
            runs.fetch_add(1, Ordering::SeqCst);
            HookToolResult::success(format!("paid {}", arguments["amount"]))
        }
    })
    .with_parameters(json!({
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    }));
    Runtime::builder()
        .agent::<pay_agent>()
        .model("scripted", ScriptedModel::new(responses))
        .tool(pay)
        .build()
        .expect("runtime")
}

fn one_payment() -> ScriptedResponse {
    ScriptedResponse::tool_call("call_1", "pay", r#"{"amount":5,"to":"bob"}"#)
}

fn two_payments() -> ScriptedResponse {
    one_payment().then_tool_call("call_2", "pay", r#"{"amount":7,"to":"carol"}"#)
}

/// A server on `runtime`, a thread of Alice's, and its event stream after the message that
/// parks the calls: the stream has just shown that run's end.
async fn parked(runtime: Runtime) -> (Server, String, SseReader) {
    parked_on(runtime, ServerConfig::default()).await
}

/// [`parked`] on a server with `config`.
async fn parked_on(runtime: Runtime, config: ServerConfig) -> (Server, String, SseReader) {
    let server = Server::start(runtime, config).await;
    let id = server.create_thread(ALICE, "pay_agent").await;
    let mut stream = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Pay."}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    assert!(events.iter().any(|e| e.kind() == "approval_requested"), "{events:#?}");
    assert_eq!(events.last().unwrap().data["status"], "awaiting_approval", "{events:#?}");
    (server, id, stream)
}

fn event<'a>(events: &'a [SseEvent], kind: &str) -> &'a SseEvent {
    events.iter().find(|e| e.kind() == kind).unwrap_or_else(|| panic!("no `{kind}` in {events:#?}"))
}

/// Alice's decision `body` on `call` of thread `id`, with the `arguments_sha256` the listing
/// gives for the call (A7) when `body` has none.
async fn decide(server: &Server, id: &str, call: &str, body: &str) -> (u16, Value) {
    let mut body: Value = serde_json::from_str(body).expect("a JSON decision");
    if body.get("arguments_sha256").is_none() {
        body["arguments_sha256"] = json!(server.listed_sha256(id, call, ALICE).await);
    }
    server.post(&format!("/threads/{id}/approvals/{call}"), ALICE, &body.to_string()).await
}

fn code(body: &Value) -> &str {
    body["error"]["code"].as_str().unwrap_or_default()
}

fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_the_owner_lists_the_waiting_calls_and_an_approval_finishes_the_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, mut stream) = parked(runtime(one_payment(), runs.clone())).await;
    let (status, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(status, 200, "{body}");
    let approvals = body["approvals"].as_array().expect("a list");
    assert_eq!(approvals.len(), 1, "{body}");
    let call = &approvals[0];
    assert_eq!((call["id"].as_str(), call["name"].as_str()), (Some("call_1"), Some("pay")), "{call}");
    assert_eq!(call["arguments"], json!({"amount": 5, "to": "bob"}));
    assert_eq!(call["reasons"], json!([{"hook": "payment_limit", "reason": "payments need a person"}]));
    assert!(call["requestedAt"].as_i64().is_some_and(|at| at > 0), "{call}");
    let (_, thread) = server.get(&format!("/threads/{id}"), ALICE).await;
    assert_eq!(thread["status"], "awaiting_approval");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let (status, body) = server.approve_listed(&id, "call_1", ALICE).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!((body["callId"].as_str(), body["decision"].as_str()), (Some("call_1"), Some("approved")), "{body}");
    assert_eq!(body["pending"], json!([]));
    let run_id = body["runId"].as_str().expect("the resumed run's id").to_owned();

    let events = stream.until("run_finished").await;
    assert_eq!(
        event(&events, "approval_resolved").data,
        json!({"type": "approval_resolved", "id": "call_1", "decision": "approved"})
    );
    assert_eq!(event(&events, "run_started").data["runId"], run_id.as_str());
    let done = event(&events, "tool_call_done");
    assert_eq!((done.data["status"].as_str(), done.data.get("denied")), (Some("success"), None), "{events:#?}");
    let finished = events.last().unwrap();
    assert_eq!(
        (finished.data["runId"].as_str(), finished.data["status"].as_str()),
        (Some(run_id.as_str()), Some("idle"))
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the approved call ran once");

    let (_, body) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    let contents: Vec<&str> =
        body["messages"].as_array().unwrap().iter().filter_map(|m| m["content"].as_str()).collect();
    assert_eq!(contents, ["Pay.", "paid 5", "Paid."], "{body}");
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"], json!([]));
    let (_, thread) = server.get(&format!("/threads/{id}"), ALICE).await;
    assert_eq!(thread["status"], "idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_a_denial_never_runs_the_tool_and_the_model_reads_the_reason() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, mut stream) = parked(runtime(one_payment(), runs.clone())).await;
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    let (status, body) = server
        .post(
            &format!("/threads/{id}/approvals/call_1"),
            ALICE,
            &json!({"decision": "deny", "reason": "over budget", "arguments_sha256": listed}).to_string(),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["decision"], "denied");
    let events = stream.until("run_finished").await;
    assert_eq!(event(&events, "approval_resolved").data["decision"], "denied");
    let done = event(&events, "tool_call_done");
    assert_eq!(
        (done.data["status"].as_str(), done.data["denied"].as_bool()),
        (Some("error"), Some(true)),
        "{events:#?}"
    );
    assert_eq!(events.last().unwrap().data["status"], "idle");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "a denied call never runs");
    let (_, body) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    let result = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").expect("the denial").clone();
    assert_eq!(result["content"], "the tool call was denied: over budget");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g8_edited_arguments_a_hook_denies_are_409_with_its_reason_and_the_call_is_denied() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, mut stream) = parked(runtime(one_payment(), runs.clone())).await;
    let (status, body) =
        decide(&server, &id, "call_1", r#"{"decision":"approve","arguments":{"amount":5000,"to":"bob"}}"#).await;
    assert_eq!((status, code(&body)), (409, "edit_denied"), "{body}");
    assert!(message(&body).contains("`payment_cap`: payments over 1000 are refused"), "{body}");
    assert!(!message(&body).contains("5000"), "never the values: {body}");
    let events = stream.until("run_finished").await;
    assert_eq!(event(&events, "approval_resolved").data["decision"], "denied");
    let done = event(&events, "tool_call_done");
    assert_eq!(done.data["denied"].as_bool(), Some(true), "{events:#?}");
    assert_eq!(events.last().unwrap().data["status"], "idle", "the turn went on");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the edited payment never ran");
    let (_, body) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    let result = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").expect("the denial").clone();
    assert_eq!(
        result["content"],
        "the tool call was denied: the arguments edited on approval were denied by `payment_cap`: payments over 1000 are refused"
    );
    let (status, body) = decide(&server, &id, "call_1", r#"{"decision":"approve"}"#).await;
    assert_eq!((status, code(&body)), (409, "already_decided"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caps_a_denial_reason_over_the_limit_is_413_naming_it_and_decides_nothing() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, _stream) = parked(runtime(one_payment(), runs.clone())).await;
    let long = "r".repeat(hooks_runtime::approvals::MAX_REASON_BYTES + 1);
    let (status, body) = decide(&server, &id, "call_1", &json!({"decision": "deny", "reason": long}).to_string()).await;
    assert_eq!((status, code(&body)), (413, "reason_too_large"), "{body}");
    assert!(message(&body).contains("the limit is 65536 bytes"), "{body}");
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"][0]["id"], "call_1", "nothing was decided: {body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_another_user_gets_the_404_of_a_missing_thread_and_decides_nothing() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, _stream) = parked(runtime(one_payment(), runs.clone())).await;
    let missing = "thread_that_does_not_exist";
    let same = |body: &Value, thread: &str| body.to_string().replace(thread, "<thread>");
    let get = (reqwest::Method::GET, "/approvals", None);
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    let decision = json!({"decision": "approve", "arguments_sha256": listed}).to_string();
    let post = (reqwest::Method::POST, "/approvals/call_1", Some(decision.as_str()));
    for (method, tail, body) in [get, post] {
        let (bob_status, bob_body) = server.call(method.clone(), &format!("/threads/{id}{tail}"), BOB, body).await;
        let (none_status, none_body) = server.call(method, &format!("/threads/{missing}{tail}"), ALICE, body).await;
        assert_eq!(bob_status, 404, "{bob_body}");
        assert_eq!((bob_status, same(&bob_body, &id)), (none_status, same(&none_body, missing)));
        assert_eq!(code(&bob_body), "thread_not_found");
    }
    // Bob's decision did nothing: the call still waits, and nothing ran.
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"].as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_a_second_decision_is_409_naming_the_state_and_an_unknown_call_404() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, mut stream) = parked(runtime(two_payments(), runs.clone())).await;
    // The first of two decisions: stored, no run yet; the other call still waits.
    let (status, body) = decide(&server, &id, "call_1", r#"{"decision":"approve"}"#).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!((body["runId"].clone(), body["pending"].clone()), (Value::Null, json!(["call_2"])), "{body}");
    let (_, listed) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    let ids: Vec<&str> = listed["approvals"].as_array().unwrap().iter().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["call_2"]);
    let (status, body) = decide(&server, &id, "call_1", r#"{"decision":"deny"}"#).await;
    assert_eq!((status, code(&body)), (409, "already_decided"), "{body}");
    assert!(message(&body).contains("`call_1`") && message(&body).contains("approved"), "{body}");

    let (status, body) = decide(&server, &id, "call_zzz", r#"{"decision":"approve"}"#).await;
    assert_eq!((status, code(&body)), (404, "approval_not_found"), "{body}");
    assert!(message(&body).contains("`call_zzz`"), "{body}");

    let (status, body) = decide(&server, &id, "call_2", r#"{"decision":"deny"}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "idle", "{events:#?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "only the approved call ran");
    // After the resumed run the step is no longer parked: still a second decision.
    let (status, body) = decide(&server, &id, "call_2", r#"{"decision":"approve"}"#).await;
    assert_eq!((status, code(&body)), (409, "already_decided"), "{body}");
    assert!(message(&body).contains("`call_2`"), "{body}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_bad_bodies_and_arguments_the_schema_refuses_are_4xx_naming_the_problem() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, _stream) = parked(runtime(one_payment(), runs.clone())).await;
    let path = format!("/threads/{id}/approvals/call_1");
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    for (body, status, expected_code, names) in [
        (r#"{"arguments_sha256":"secret-5","decision":"approve"}"#, 400, "invalid_field", "`arguments_sha256`"),
        (r#"{"decision":"maybe-secret-1234"}"#, 400, "invalid_field", "`decision`"),
        (r#"{"decision":true}"#, 400, "invalid_field", "`decision`"),
        (r#"{}"#, 400, "missing_field", "`decision`"),
        (r#"{"decision":"deny","reason":5}"#, 400, "invalid_field", "`reason`"),
        (r#"{"decision":"approve","arguments":"secret-text-5678"}"#, 400, "invalid_field", "`arguments`"),
        (r#"{"decision":"approve","arguments":[1]}"#, 400, "invalid_field", "`arguments`"),
        (r#"{"decision":"approve","reason":"fine"}"#, 400, "invalid_field", "`reason`"),
        (r#"{"decision":"deny","arguments":{}}"#, 400, "invalid_field", "`arguments`"),
        (r#"{"decision":"approve","note":"x"}"#, 400, "unknown_field", "`note`"),
        (r#"["approve"]"#, 400, "invalid_body", "an approval decision"),
        (r#"{"decision":"#, 400, "invalid_json", "not valid JSON"),
        (
            r#"{"decision":"approve","arguments":{"amount":"secret-amount-9431","to":"bob"}}"#,
            422,
            "invalid_arguments",
            "/amount",
        ),
    ] {
        // Every decision that names no hash gets the listed one, so that the field it checks is
        // the one refused (a7_ checks a decision without it).
        let body = if body.contains("arguments_sha256") || !body.starts_with(r#"{"decision""#) {
            body.to_owned()
        } else {
            body.replacen('{', &format!(r#"{{"arguments_sha256":"{listed}","#), 1)
        };
        let body = body.as_str();
        let (got, response) = server.post(&path, ALICE, body).await;
        assert_eq!((got, code(&response)), (status, expected_code), "{body}: {response}");
        assert!(message(&response).contains(names), "{body}: {response}");
        assert!(!message(&response).contains("secret"), "a value is never echoed: {response}");
    }
    // Nothing was decided.
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"][0]["arguments"], json!({"amount": 5, "to": "bob"}), "{body}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    // Valid edited arguments are the ones the tool runs with.
    let (status, body) =
        decide(&server, &id, "call_1", r#"{"decision":"approve","arguments":{"amount":2,"to":"bob"}}"#).await;
    assert_eq!(status, 202, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a6_a_message_while_calls_wait_is_409_naming_them_and_stores_nothing() {
    let runs = Arc::new(AtomicUsize::new(0));
    let runtime = runtime(two_payments(), runs.clone());
    let store = runtime.store().clone();
    let (server, id, mut stream) = parked(runtime).await;
    let (_, before) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"And more?"}"#).await;
    assert_eq!((status, code(&body)), (409, "awaiting_approval"), "{body}");
    assert!(message(&body).contains("`call_1`, `call_2`"), "{body}");
    assert!(message(&body).contains(&format!("/threads/{id}/approvals/")), "says how to decide: {body}");
    let (_, after) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    assert_eq!(before, after, "the refused message is not stored");
    assert!(store.inbox().unwrap().pending_inputs(&id).await.expect("inbox").is_empty(), "nor queued");

    for call in ["call_1", "call_2"] {
        let (status, body) = server.approve_listed(&id, call, ALICE).await;
        assert!(status == 200 || status == 202, "{body}");
    }
    stream.until("run_finished").await;
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// The stranger's acceptance case (A7): the listed call shows `arguments_sha256`, the SHA-256 of
/// its arguments' canonical JSON; a decision without it is refused naming the field, one with
/// a wrong hash is 409 `stale_approval` and runs nothing; one with the listed hash runs the tool
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a7_a_decision_names_the_listed_arguments_hash_and_a_wrong_one_is_409_stale_approval() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, mut stream) = parked(runtime(one_payment(), runs.clone())).await;
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    let listed = body["approvals"][0]["arguments_sha256"].as_str().expect("the listed hash").to_owned();
    // `printf '{"amount":5,"to":"bob"}' | sha256sum`
    assert_eq!(listed, "29ddb7bbd60d67fa1591798dc16ecfeddfbfbb48c6353113c32659d4e76a6078", "{body}");
    let path = format!("/threads/{id}/approvals/call_1");

    let (status, response) = server.post(&path, ALICE, r#"{"decision":"approve"}"#).await;
    assert_eq!((status, code(&response)), (400, "missing_field"), "{response}");
    assert!(message(&response).contains("`arguments_sha256`"), "{response}");

    // The hash of other arguments than the ones the call waits with.
    let other = "7a1c5f0a4ff8a4d6e2f3e8b9a9c5c3f1d0e7b6a5c4d3e2f1a0b9c8d7e6f5a4b3";
    let wrong = json!({"decision": "approve", "arguments_sha256": other}).to_string();
    let (status, response) = server.post(&path, ALICE, &wrong).await;
    assert_eq!((status, code(&response)), (409, "stale_approval"), "{response}");
    assert!(message(&response).contains(&listed), "names the hash the call waits with: {response}");
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"][0]["arguments_sha256"], listed.as_str(), "nothing was decided: {body}");
    assert_eq!(runs.load(Ordering::SeqCst), 0, "nothing ran");

    let right = json!({"decision": "approve", "arguments_sha256": listed}).to_string();
    let (status, response) = server.post(&path, ALICE, &right).await;
    assert_eq!(status, 202, "{response}");
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "idle", "{events:#?}");
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the tool ran once");
}

/// A9 over HTTP: an approval remembered for the thread (its exact arguments) answers the
/// thread's next call with those arguments, which runs without waiting; its owner lists it and
/// another user does not see it; another user's DELETE is the 404 of a missing one; the
/// owner's revokes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_a_remembered_approval_answers_the_next_call_and_only_its_owner_lists_and_revokes_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let responses = vec![
        one_payment(),
        ScriptedResponse::text("Paid."),
        ScriptedResponse::tool_call("call_2", "pay", r#"{"to":"bob","amount":5}"#),
        ScriptedResponse::text("Paid again."),
    ];
    let (server, id, mut stream) = parked(scripted_runtime(responses, runs.clone())).await;
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    let body = json!({"decision": "approve", "arguments_sha256": listed, "remember": {"scope": "thread"}});
    let (status, answer) = server.post(&format!("/threads/{id}/approvals/call_1"), ALICE, &body.to_string()).await;
    assert_eq!(status, 202, "{answer}");
    let remembered = &answer["remembered"];
    assert_eq!(remembered["scope"], "thread", "{answer}");
    assert_eq!(remembered["tool"], "pay");
    assert_eq!(remembered["threadId"], id.as_str());
    assert_eq!(remembered["createdBy"], "alice");
    assert_eq!(remembered["matcher"], json!({"kind": "arguments", "sha256": listed}));
    let remembered_id = remembered["id"].as_str().expect("its id").to_owned();
    assert_eq!(stream.until("run_finished").await.last().unwrap().data["status"], "idle");

    // The same arguments (keys in another order) on the same thread: no wait, the tool runs.
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"Again."}"#).await;
    assert_eq!(status, 202, "{body}");
    let events = stream.until("run_finished").await;
    assert!(events.iter().all(|e| e.kind() != "approval_requested"), "{events:#?}");
    assert_eq!(events.last().unwrap().data["status"], "idle", "{events:#?}");
    assert_eq!(runs.load(Ordering::SeqCst), 2, "both calls ran");

    let (status, mine) = server.get("/approvals/remembered", ALICE).await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["remembered"].as_array().unwrap().len(), 1, "{mine}");
    assert_eq!(mine["remembered"][0]["id"], remembered_id.as_str());
    let (status, theirs) = server.get("/approvals/remembered", BOB).await;
    assert_eq!((status, &theirs), (200, &json!({"remembered": []})));

    let path = format!("/approvals/remembered/{remembered_id}");
    let (status, body) = server.call(reqwest::Method::DELETE, &path, BOB, None).await;
    assert_eq!((status, code(&body)), (404, "remembered_approval_not_found"), "{body}");
    let (_, mine) = server.get("/approvals/remembered", ALICE).await;
    assert_eq!(mine["remembered"].as_array().unwrap().len(), 1, "Bob's DELETE revoked nothing: {mine}");
    let (status, body) = server.call(reqwest::Method::DELETE, &path, ALICE, None).await;
    assert_eq!(status, 204, "{body}");
    let (_, mine) = server.get("/approvals/remembered", ALICE).await;
    assert_eq!(mine, json!({"remembered": []}));
    let (status, body) = server.call(reqwest::Method::DELETE, &path, ALICE, None).await;
    assert_eq!((status, code(&body)), (404, "remembered_approval_not_found"), "{body}");
}

/// A9 over HTTP: a pattern that does not parse, or does not select the call being approved, is
/// 400 `invalid_remember` naming the problem; an unknown scope or a remembered denial is 400
/// naming the field; none of them decides anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_a_bad_pattern_or_scope_is_400_naming_the_problem_and_decides_nothing() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, _stream) = parked(runtime(one_payment(), runs.clone())).await;
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    let path = format!("/threads/{id}/approvals/call_1");
    let cases = [
        ("approve", json!({"scope": "user", "pattern": "pay(bob"}), "invalid_remember", "is not a permission rule"),
        ("approve", json!({"scope": "user", "pattern": "pay(carol)"}), "invalid_remember", "does not select the call"),
        ("approve", json!({"scope": "forever"}), "invalid_field", "`remember.scope`"),
        ("deny", json!({"scope": "thread"}), "invalid_field", "goes with `\"decision\": \"approve\"`"),
    ];
    for (decision, remember, expected_code, says) in cases {
        let body = json!({"decision": decision, "arguments_sha256": listed, "remember": remember});
        let (status, answer) = server.post(&path, ALICE, &body.to_string()).await;
        assert_eq!((status, code(&answer)), (400, expected_code), "{remember}: {answer}");
        assert!(message(&answer).contains(says), "{remember}: {answer}");
    }
    let (_, body) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(body["approvals"].as_array().unwrap().len(), 1, "nothing was decided: {body}");
    let (_, mine) = server.get("/approvals/remembered", ALICE).await;
    assert_eq!(mine, json!({"remembered": []}));
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// A9 over HTTP: an `always` approval would answer other users' calls, so by default a decision
/// asking for one is 403 `remember_scope_forbidden` and decides nothing; a server configured to
/// allow it keeps one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a9_an_always_approval_over_http_is_refused_unless_the_server_allows_it() {
    let runs = Arc::new(AtomicUsize::new(0));
    let (server, id, _stream) = parked(runtime(one_payment(), runs.clone())).await;
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    let body = json!({"decision": "approve", "arguments_sha256": listed, "remember": {"scope": "always"}});
    let path = format!("/threads/{id}/approvals/call_1");
    let (status, answer) = server.post(&path, ALICE, &body.to_string()).await;
    assert_eq!((status, code(&answer)), (403, "remember_scope_forbidden"), "{answer}");
    assert!(message(&answer).contains("every user's calls"), "{answer}");
    let (_, waiting) = server.get(&format!("/threads/{id}/approvals"), ALICE).await;
    assert_eq!(waiting["approvals"].as_array().unwrap().len(), 1, "nothing was decided: {waiting}");
    let (_, mine) = server.get("/approvals/remembered", ALICE).await;
    assert_eq!(mine, json!({"remembered": []}));
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let runs = Arc::new(AtomicUsize::new(0));
    let config = ServerConfig::default().allow_remember_always(true);
    let (server, id, mut stream) = parked_on(runtime(one_payment(), runs.clone()), config).await;
    let listed = server.listed_sha256(&id, "call_1", ALICE).await;
    let body = json!({"decision": "approve", "arguments_sha256": listed, "remember": {"scope": "always"}});
    let (status, answer) = server.post(&format!("/threads/{id}/approvals/call_1"), ALICE, &body.to_string()).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["remembered"]["scope"], "always", "{answer}");
    assert_eq!(stream.until("run_finished").await.last().unwrap().data["status"], "idle");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}
