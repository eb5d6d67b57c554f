//! Scale-out through the runtime itself: two runtimes on one PostgreSQL schema (as two processes
//! would be, each with its own pool) send to the same thread at once, and `Thread::send` takes
//! the thread's lease, so the turns never overlap and every message is stored once.
#![cfg(feature = "postgres")]

use crate::postgres_support;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};
use postgres_support::PgSchema;
use tracing::instrument::WithSubscriber as _;

/// How many turns entered the filter, how many are in it now, and the most that ever were.
static ENTERED: AtomicUsize = AtomicUsize::new(0);
static INSIDE: AtomicUsize = AtomicUsize::new(0);
static MOST_INSIDE: AtomicUsize = AtomicUsize::new(0);
/// Notified when a send finds the thread's lease held and starts waiting for it.
static LEASE_WAIT: OnceLock<Arc<tokio::sync::Notify>> = OnceLock::new();
/// Whether the first turn saw the other send wait before it went on.
static SAW_THE_WAIT: AtomicBool = AtomicBool::new(false);

/// The first turn stays in here until the other runtime's send waits for the thread's lease:
/// were the turns not serialised, that send's turn would come in here meanwhile.
#[hook(filter_messages, id = "gated_filter", timeout_ms = 20000)]
async fn gated_filter(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    let inside = INSIDE.fetch_add(1, Ordering::SeqCst) + 1;
    MOST_INSIDE.fetch_max(inside, Ordering::SeqCst);
    if ENTERED.fetch_add(1, Ordering::SeqCst) == 0 {
        LEASE_WAIT.get().expect("the test sets the signal first").notified().await;
        SAW_THE_WAIT.store(true, Ordering::SeqCst);
    }
    INSIDE.fetch_sub(1, Ordering::SeqCst);
}

define_prompt! { name: gated_prompt, model: "scripted", prompt: "p", hooks: [gated_filter] }
define_agent! { name: gated_agent, side_a: { prompt: gated_prompt, stop_on_response: true } }

async fn runtime(schema: &PgSchema) -> Runtime {
    let replies = (0..8).map(|_| ScriptedResponse::text("a reply"));
    Runtime::builder()
        .agent::<gated_agent>()
        .model("scripted", ScriptedModel::new(replies))
        .store(schema.store().await)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_to_one_thread_from_two_runtimes_take_turns() {
    let schema = PgSchema::new("runs");
    let (a, b) = (runtime(&schema).await, runtime(&schema).await);
    let thread_a = a.create_thread("gated_agent", ThreadOptions::default()).await.unwrap();
    let thread_id = thread_a.id().to_owned();
    let thread_b = b.open_thread(&thread_id).await.unwrap();

    // The send that finds the lease held logs that it waits; the first turn waits for that.
    let (logs, waiting) = postgres_support::log_signal("this owner waits for its release");
    LEASE_WAIT.set(waiting).unwrap();
    let sends = [
        tokio::spawn(async move { thread_a.send("from a, 1").await.map(|_| ()) }.with_subscriber(logs.clone())),
        tokio::spawn(async move { thread_b.send("from b, 1").await.map(|_| ()) }.with_subscriber(logs)),
    ];
    for send in sends {
        send.await.unwrap().unwrap();
    }

    assert_eq!(ENTERED.load(Ordering::SeqCst), 2, "both turns ran");
    assert!(SAW_THE_WAIT.load(Ordering::SeqCst), "the first turn ended before the other send waited for the lease");
    assert_eq!(MOST_INSIDE.load(Ordering::SeqCst), 1, "two turns of one thread overlapped");
    let messages = a.open_thread(&thread_id).await.unwrap().messages().await.unwrap();
    let contents: Vec<&str> = messages.iter().filter_map(|m| m.content.as_deref()).collect();
    for sent in ["from a, 1", "from b, 1"] {
        assert_eq!(contents.iter().filter(|c| **c == sent).count(), 1, "{sent} stored once: {contents:?}");
    }
    assert_eq!(messages.iter().filter(|m| m.role == Role::Assistant).count(), 2, "{contents:?}");
    schema.drop().await;
}

/// No hook, so the run is quick.
mod quick {
    use hooks_runtime::prelude::*;

    define_prompt! { name: quick_prompt, model: "scripted", prompt: "p" }
    define_agent! { name: quick_agent, side_a: { prompt: quick_prompt, stop_on_response: true } }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_on_another_runtime_sees_a_run_with_no_forwarding() {
    let schema = PgSchema::new("publish");
    let store_b = schema.store().await;
    let a = Runtime::builder()
        .agent::<quick::quick_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("hello from a")]))
        .store(schema.store().await)
        .build()
        .unwrap();
    let thread = a.create_thread("quick_agent", ThreadOptions::default()).await.unwrap();
    let mut events = store_b.subscribe(thread.id(), 0).await.unwrap();
    thread.send("hi").await.unwrap();

    // What B receives through the database alone, until the run's final status.
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(20), events.next())
            .await
            .expect("the run's events reach the other runtime's subscriber")
            .expect("the subscription lives")
            .unwrap();
        let kind = event.event["type"].as_str().unwrap_or_default().to_owned();
        let detail = event.event.get("status").or_else(|| event.event.get("role")).cloned().unwrap_or_default();
        seen.push((event.seq, kind.clone(), detail.as_str().unwrap_or_default().to_owned()));
        if kind == "status" && event.event["status"] != "running" {
            break;
        }
    }
    let seqs: Vec<u64> = seen.iter().map(|(seq, ..)| *seq).collect();
    assert_eq!(seqs, (1..=seen.len() as u64).collect::<Vec<_>>(), "in order, none missing: {seen:?}");
    let kinds: Vec<(&str, &str)> = seen.iter().map(|(_, kind, detail)| (kind.as_str(), detail.as_str())).collect();
    assert_eq!(
        kinds,
        [("status", "running"), ("message_created", "user"), ("message_created", "assistant"), ("status", "idle"),]
    );
    schema.drop().await;
}
