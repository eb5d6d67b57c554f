//! A run that loses its thread's lease mid-run is stopped and writes nothing more: two runtimes
//! on one PostgreSQL schema (as two processes would be, each with its own pool), the lease
//! expired or stolen by hand while the old owner's run waits in a hook.
#![cfg(feature = "postgres")]

use crate::postgres_support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, MessageStore, PostgresOptions, PostgresStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use postgres_support::{PgSchema, database_url, raw_client};
use tokio::sync::Notify;

/// `(type, status or role)` of every stored event of a thread, in order.
async fn stored_events(thread_id: &str, schema: &PgSchema) -> Vec<(String, String)> {
    let client = raw_client().await;
    let sql = format!("SELECT event::text FROM {}.thread_events WHERE thread_id = $1 ORDER BY seq", schema.name);
    let rows = client.query(&sql, &[&thread_id]).await.expect("read the events");
    rows.iter()
        .map(|row| {
            let event: serde_json::Value = serde_json::from_str(row.get(0)).expect("event JSON");
            let detail = event.get("status").or_else(|| event.get("role")).and_then(|v| v.as_str()).unwrap_or("");
            (event["type"].as_str().unwrap_or("").to_owned(), detail.to_owned())
        })
        .collect()
}

/// Waits until the thread has `count` stored events, so that the run's events so far are in
/// before its lease is taken away.
async fn wait_for_events(thread_id: &str, schema: &PgSchema, count: usize) {
    for _ in 0..200 {
        if stored_events(thread_id, schema).await.len() >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the run's first {count} events never reached the store");
}

async fn run_lease(schema: &PgSchema, sql: &str, thread_id: &str) {
    let client = raw_client().await;
    let changed = client
        .execute(&format!("UPDATE {}.thread_leases SET {sql} WHERE thread_id = $1", schema.name), &[&thread_id])
        .await
        .expect("change the lease row");
    assert_eq!(changed, 1, "the run holds a lease row");
}

fn texts(messages: &[HookMessage]) -> Vec<&str> {
    messages.iter().map(|m| m.content.as_deref().unwrap_or("")).collect()
}

// ---------------------------------------------------------------------------------------------
// Taken over: the lease expires while A's run waits, B takes the thread and runs a turn, then
// A's run goes on.

static TAKEOVER_CALLS: AtomicUsize = AtomicUsize::new(0);
static TAKEOVER_ENTERED: Notify = Notify::const_new();
static TAKEOVER_GATE: Notify = Notify::const_new();

/// A's turn (the first) waits here until the test lets it go; B's passes.
#[hook(filter_messages, id = "takeover_pause", timeout_ms = 30000)]
async fn takeover_pause(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    if TAKEOVER_CALLS.fetch_add(1, Ordering::SeqCst) == 0 {
        TAKEOVER_ENTERED.notify_one();
        TAKEOVER_GATE.notified().await;
    }
}

define_prompt! { name: takeover_prompt, model: "scripted", prompt: "p", hooks: [takeover_pause] }
define_agent! { name: takeover_agent, side_a: { prompt: takeover_prompt, stop_on_response: true } }

/// Recovery settles (rather than resumes) the turn B takes over, so B's own turn is the one
/// that follows.
async fn takeover_runtime(schema: &PgSchema, reply: &str) -> Runtime {
    Runtime::builder()
        .recovery_policy(hooks_runtime::RecoveryPolicy::Settle)
        .agent::<takeover_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text(reply)]))
        .store(schema.store().await)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_lease_was_taken_over_stops_and_writes_nothing_after_the_takeover() {
    let schema = PgSchema::new("lease_takeover");
    let (a, b) = (takeover_runtime(&schema, "reply from a").await, takeover_runtime(&schema, "reply from b").await);
    let thread_a = a.create_thread("takeover_agent", ThreadOptions::default()).await.unwrap();
    let thread_id = thread_a.id().to_owned();
    let running = thread_a.clone();
    let run_a = tokio::spawn(async move { running.send("from a").await });
    tokio::time::timeout(Duration::from_secs(20), TAKEOVER_ENTERED.notified()).await.expect("A's turn starts");
    wait_for_events(&thread_id, &schema, 2).await;

    // A stalled past its lease: it expired, and B takes the thread and runs a turn.
    run_lease(&schema, "expires_at = clock_timestamp() - interval '1 second'", &thread_id).await;
    let outcome_b = b.open_thread(&thread_id).await.unwrap().send("from b").await.unwrap();
    assert_eq!(outcome_b.status, ThreadStatus::Idle, "{outcome_b}");
    TAKEOVER_GATE.notify_one();
    let outcome_a = run_a.await.unwrap().unwrap();

    assert_eq!(outcome_a.status, ThreadStatus::Failed(FailReason::LeaseLost), "{outcome_a}");
    assert!(outcome_a.to_string().contains("lease on the thread was lost"), "{outcome_a}");
    assert_eq!(thread_a.status(), ThreadStatus::Failed(FailReason::LeaseLost), "A's own view of the thread");
    let store = schema.store().await;
    let messages = store.messages(&thread_id).await.unwrap();
    assert_eq!(texts(&messages), ["from a", "from b", "reply from b"], "A's reply after the takeover is not stored");
    let record = store.load_thread(&thread_id).await.unwrap().unwrap();
    assert_eq!(record.status, ThreadStatus::Idle, "B's status stands, not A's");
    let events = stored_events(&thread_id, &schema).await;
    let events: Vec<(&str, &str)> = events.iter().map(|(kind, detail)| (kind.as_str(), detail.as_str())).collect();
    assert_eq!(
        events,
        [
            ("status", "running"),
            ("message_created", "user"),
            // B took over a run left `running`: it announces A's run as `failed (owner_lost)`.
            ("status", "failed"),
            ("status", "running"),
            ("message_created", "user"),
            ("message_created", "assistant"),
            ("status", "idle"),
        ],
        "A's events before the takeover, then B's only"
    );
    schema.drop().await;
}

// ---------------------------------------------------------------------------------------------
// Stolen while A's run writes nothing: the renewal finds the lease gone and stops the run at
// its next step.

static RENEWAL_ENTERED: Notify = Notify::const_new();
static RENEWAL_SAW_ABORT: AtomicBool = AtomicBool::new(false);

/// Waits (up to 20 s) for the run to be stopped, writing nothing meanwhile.
#[hook(filter_messages, id = "renewal_wait_for_stop", timeout_ms = 30000)]
async fn renewal_wait_for_stop(state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    RENEWAL_ENTERED.notify_one();
    for _ in 0..1000 {
        if state.execution.as_ref().is_some_and(|execution| execution.abort_signal.is_aborted()) {
            RENEWAL_SAW_ABORT.store(true, Ordering::SeqCst);
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

define_prompt! {
    name: renewal_prompt,
    model: "scripted",
    prompt: "p",
    tools: ["renewal_tool"],
    hooks: [renewal_wait_for_stop],
}
define_agent! { name: renewal_agent, side_a: { prompt: renewal_prompt, stop_on_response: true, max_steps: 4 } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewal_that_finds_the_lease_stolen_stops_the_run_at_its_next_step() {
    let schema = PgSchema::new("lease_renewal");
    // Renewed every 100 ms, so the theft is noticed long before the hook gives up.
    let options = PostgresOptions::new().schema(&schema.name).run_lease_ttl(Duration::from_millis(300));
    let store = PostgresStore::connect_with(&database_url(), options).await.unwrap();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "renewal_tool", "{}"),
        ScriptedResponse::text("a second step that must not run"),
    ]);
    let runtime = Runtime::builder()
        .agent::<renewal_agent>()
        .model("scripted", model.clone())
        .tool(FnTool::new("renewal_tool", "Answers ok.", |_| async { HookToolResult::success("ok") }))
        .store(store.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread("renewal_agent", ThreadOptions::default()).await.unwrap();
    let thread_id = thread.id().to_owned();
    let running = thread.clone();
    let run = tokio::spawn(async move { running.send("hello").await });
    tokio::time::timeout(Duration::from_secs(20), RENEWAL_ENTERED.notified()).await.expect("the turn starts");
    wait_for_events(&thread_id, &schema, 2).await;

    run_lease(
        &schema,
        "owner = 'intruder', epoch = epoch + 1, expires_at = clock_timestamp() + interval '1 hour'",
        &thread_id,
    )
    .await;
    let outcome = run.await.unwrap().unwrap();

    assert!(RENEWAL_SAW_ABORT.load(Ordering::SeqCst), "the renewal's finding stopped the run while it wrote nothing");
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::LeaseLost), "{outcome}");
    // The loss fired the abort while the step was assembling its context: the model is not
    // asked at all.
    assert_eq!(model.requests().len(), 0, "no model request once the loss is known");
    let messages = store.messages(&thread_id).await.unwrap();
    assert_eq!(texts(&messages), ["hello"], "neither the tool call nor its result is stored");
    assert_eq!(
        store.load_thread(&thread_id).await.unwrap().unwrap().status,
        ThreadStatus::Running,
        "the status stays as it was when the lease was lost, for whoever takes the thread over to mark"
    );
    assert_eq!(stored_events(&thread_id, &schema).await.len(), 2, "no event after the loss");
    schema.drop().await;
}
