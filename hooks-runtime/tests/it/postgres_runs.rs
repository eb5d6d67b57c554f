//! Scale-out through the runtime itself: two runtimes on one PostgreSQL schema (as two processes
//! would be, each with its own pool) send to the same thread at once, and `Thread::send` takes
//! the thread's lease, so the turns never overlap and every message is stored once.
#![cfg(feature = "postgres")]

use crate::postgres_support;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};
use postgres_support::PgSchema;

/// (start, end) of every turn's context assembly, from both runtimes.
static TURNS: Mutex<Vec<(Instant, Instant)>> = Mutex::new(Vec::new());

/// Takes a while, so that two turns running at once would overlap here.
#[hook(filter_messages, id = "slow_filter", timeout_ms = 5000)]
async fn slow_filter(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    let start = Instant::now();
    tokio::time::sleep(Duration::from_millis(300)).await;
    TURNS.lock().unwrap().push((start, Instant::now()));
}

define_prompt! { name: slow_prompt, model: "scripted", prompt: "p", hooks: [slow_filter] }
define_agent! { name: slow_agent, side_a: { prompt: slow_prompt, stop_on_response: true } }

async fn runtime(schema: &PgSchema) -> Runtime {
    let replies = (0..8).map(|_| ScriptedResponse::text("a reply"));
    Runtime::builder()
        .agent::<slow_agent>()
        .model("scripted", ScriptedModel::new(replies))
        .store(schema.store().await)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_to_one_thread_from_two_runtimes_take_turns() {
    let schema = PgSchema::new("runs");
    let (a, b) = (runtime(&schema).await, runtime(&schema).await);
    let thread_a = a.create_thread("slow_agent", ThreadOptions::default()).await.unwrap();
    let thread_id = thread_a.id().to_owned();
    let thread_b = b.open_thread(&thread_id).await.unwrap();

    let sends = [
        tokio::spawn(async move { thread_a.send("from a, 1").await.map(|_| ()) }),
        tokio::spawn(async move { thread_b.send("from b, 1").await.map(|_| ()) }),
    ];
    for send in sends {
        send.await.unwrap().unwrap();
    }

    let mut turns = TURNS.lock().unwrap().clone();
    turns.sort();
    assert_eq!(turns.len(), 2, "both turns ran");
    assert!(turns[0].1 <= turns[1].0, "two turns of one thread overlapped: {turns:?}");
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
