//! Idle thread entries leave the server's memory: their event log writer stops, and the next
//! request opens the thread again from the store. Its own test binary, because the counters it
//! reads are the process's.

mod support;

use std::time::{Duration, Instant};

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_server::__private::{open_thread_entries, running_event_log_writers};
use hooks_server::{HookRuns, ServerConfig};
use support::{ALICE, PATIENCE, Server};

define_prompt! {
    name: echo_prompt,
    model: "scripted",
    prompt: "Answer.",
}

define_agent! {
    name: echo_agent,
    side_a: { prompt: echo_prompt, stop_on_response: true, max_steps: 2 },
    side_b: { human: true },
}

/// The tests read process-wide counters: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn runtime(replies: usize) -> Runtime {
    Runtime::builder()
        .agent::<echo_agent>()
        .model("scripted", ScriptedModel::new((0..replies).map(|_| ScriptedResponse::text("Hello."))))
        .build()
        .expect("runtime")
}

fn config(idle: Duration) -> ServerConfig {
    ServerConfig::default().catalog(vec!["echo_agent".into()]).thread_idle_eviction(idle).max_threads_per_user(20_000)
}

async fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "{what}: still not so after {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Resident memory of this process in KiB, from `/proc/self/status`.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status")
}

// Paused time until the thread is evicted: the eviction timer and the entries' idle clocks are
// tokio's, which jumps from one timer to the next whenever the server and the client both wait.
// The run after it goes on real time (its event log writer times what it holds by the system's
// clock).
#[tokio::test(start_paused = true)]
async fn an_idle_thread_is_evicted_with_its_event_log_writer_and_reopens_on_the_next_request() {
    let _serial = SERIAL.lock().await;
    let runs = HookRuns::new();
    let config = config(Duration::from_millis(200)).hook_runs(Some(runs.clone()));
    let server = Server::start(runtime(1), config).await;
    let id = server.create_thread(ALICE, "echo_agent").await;
    assert_eq!((open_thread_entries(), running_event_log_writers()), (1, 1));
    assert_eq!(format!("{runs:?}"), "HookRuns { threads: 1 }");

    // An open stream keeps the thread, however long it is quiet: four idle periods, sixteen
    // eviction rounds, on the paused clock.
    let events = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(open_thread_entries(), 1, "evicted while a stream was open");
    drop(events);

    wait_until("the idle thread is evicted", || open_thread_entries() == 0).await;
    wait_until("its event log writer stops", || running_event_log_writers() == 0).await;
    assert_eq!(format!("{runs:?}"), "HookRuns { threads: 0 }", "its hook-run sink is forgotten too");
    tokio::time::resume();

    // Opened again from the store: it reads, runs and streams as before.
    let (status, thread) = server.get(&format!("/threads/{id}"), ALICE).await;
    assert_eq!(status, 200, "{thread}");
    assert_eq!((open_thread_entries(), running_event_log_writers()), (1, 1));
    let mut events = server.stream(&format!("/threads/{id}/events"), ALICE, None).await;
    let (status, body) = server.post(&format!("/threads/{id}/messages"), ALICE, r#"{"content":"hi"}"#).await;
    assert_eq!(status, 202, "{body}");
    let run = events.until("run_finished").await;
    assert_eq!(run.last().unwrap().data["status"], "idle", "{run:?}");
    let (_, messages) = server.get(&format!("/threads/{id}/messages"), ALICE).await;
    assert_eq!(messages["messages"].as_array().unwrap().len(), 2, "{messages}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_empty_threads_leave_no_entry_behind_after_eviction() {
    let _serial = SERIAL.lock().await;
    let server = std::sync::Arc::new(Server::start(runtime(0), config(Duration::from_millis(500))).await);
    let before = rss_kib();
    let started = Instant::now();
    let mut creators = Vec::new();
    for _ in 0..8 {
        let server = server.clone();
        creators.push(tokio::spawn(async move {
            for _ in 0..1250 {
                server.create_thread(ALICE, "echo_agent").await;
            }
        }));
    }
    for creator in creators {
        creator.await.expect("creator");
    }
    let created_in = started.elapsed();
    let peak_entries = open_thread_entries();
    let at_peak = rss_kib();
    wait_until("every idle thread is evicted", || open_thread_entries() == 0).await;
    wait_until("every event log writer stops", || running_event_log_writers() == 0).await;
    let after = rss_kib();
    println!(
        "10,000 threads created in {created_in:?}; entries at the end of the burst {peak_entries}; \
         RSS {before} KiB before, {at_peak} KiB after the burst, {after} KiB after eviction"
    );
    let (status, page) = server.get("/threads?limit=1000", ALICE).await;
    assert_eq!(status, 200);
    assert_eq!(page["threads"].as_array().unwrap().len(), 1000, "the threads are still in the store");
}
