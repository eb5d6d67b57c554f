//! Concurrency: 10,000 threads of one runtime, each sent a message at once, on a multi-threaded
//! tokio runtime with 1 and then 2 worker threads, with a hook on every thread hook point that a
//! run with one tool call hits. Prints runs per second and the 2-vs-1 ratio, measured in this run
//! (rounds interleaved, median), and the most hooks seen suspended inside a dispatch at once: a
//! lock held across dispatch would keep that at 1.
//!
//! Run it with `cargo bench -p hooks-runtime --bench concurrency`. No tracing subscriber is
//! installed. `BENCH_THREADS` and `BENCH_ROUNDS` override 10,000 threads and 3 rounds.

#![allow(missing_docs)]

mod echo_model;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use echo_model::EchoModel;
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MAX_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static HOOK_RUNS: AtomicUsize = AtomicUsize::new(0);

/// An async hook body that stays suspended inside its dispatch for one scheduling round.
async fn suspended() {
    let now = IN_FLIGHT.fetch_add(1, Ordering::Relaxed) + 1;
    MAX_IN_FLIGHT.fetch_max(now, Ordering::Relaxed);
    tokio::task::yield_now().await;
    IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    HOOK_RUNS.fetch_add(1, Ordering::Relaxed);
}

fn ran() {
    HOOK_RUNS.fetch_add(1, Ordering::Relaxed);
}

#[hook(after_thread_created, id = "k_thread_created")]
fn k_thread_created(_state: &ThreadState) {
    ran();
}

#[hook(after_system_message, id = "k_system")]
async fn k_system(_state: &ThreadState, _system: &str) -> Option<String> {
    suspended().await;
    None
}

#[hook(filter_messages, id = "k_filter")]
fn k_filter(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    ran();
    messages
}

#[hook(prefilter_llm_history, id = "k_prefilter")]
async fn k_prefilter(_state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    suspended().await;
    messages
}

#[hook(before_create_message, id = "k_before_create")]
async fn k_before_create(_state: &ThreadState, message: MessageRecord) -> MessageRecord {
    suspended().await;
    message
}

#[hook(after_create_message, id = "k_after_create")]
fn k_after_create(_state: &ThreadState, _message: &MessageRecord) {
    ran();
}

#[hook(tool_call_started, id = "k_started")]
fn k_started(_state: &ThreadState, _call: &HookToolCall, _progress: Option<&str>) {
    ran();
}

#[hook(tool_call_done, id = "k_done")]
async fn k_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {
    suspended().await;
}

#[hook(after_tool_call_success, id = "k_success")]
fn k_success(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    ran();
    None
}

#[hook(before_store_tool_result, id = "k_store")]
fn k_store(_state: &ThreadState, _call: &ToolCallRecord, result: HookToolResult) -> HookToolResult {
    ran();
    result
}

define_prompt! {
    name: k_prompt,
    model: "echo",
    prompt: "Echo through the tool.",
    tools: ["k_echo"],
    hooks: [
        k_system, k_filter, k_prefilter, k_before_create, k_after_create,
        k_started, k_done, k_success, k_store,
    ],
}

define_agent! {
    name: k_agent,
    side_a: { prompt: k_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
    hooks: [k_thread_created],
}

/// Runs `threads` conversations at once on `workers` worker threads; returns the wall time.
fn run(workers: usize, threads: usize) -> Duration {
    let tokio = tokio::runtime::Builder::new_multi_thread().worker_threads(workers).enable_all().build().unwrap();
    tokio.block_on(async move {
        let runtime = Runtime::builder()
            .agent::<k_agent>()
            .model("echo", EchoModel::new("k_echo"))
            .tool(FnTool::new("k_echo", "Echoes its tag.", |args| async move {
                HookToolResult::success(format!("echo:{}", args["tag"].as_str().unwrap_or_default()))
            }))
            .build()
            .unwrap();
        let started = Instant::now();
        let tasks: Vec<_> = (0..threads)
            .map(|i| {
                let runtime = runtime.clone();
                tokio::spawn(async move {
                    let thread = runtime.create_thread("k_agent", ThreadOptions::default()).await.unwrap();
                    thread.send(&format!("t{i}")).await.unwrap()
                })
            })
            .collect();
        for task in tasks {
            let outcome = task.await.expect("no run panicked");
            assert!(outcome.reply.is_some_and(|reply| reply.starts_with("done:")));
        }
        started.elapsed()
    })
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let threads = env("BENCH_THREADS", 10_000);
    let rounds = env("BENCH_ROUNDS", 3).max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "Concurrency: {threads} threads, each one run (user message, tool call, reply: 2 model steps, 4 messages), 
         19 hook runs), on a multi-threaded tokio runtime; {rounds} rounds, 1 and 2 workers interleaved; {cores} cores"
    );
    run(1, threads.min(1000)); // warm-up
    let (mut one, mut two) = (Vec::new(), Vec::new());
    let mut most_suspended = 0;
    for _ in 0..rounds {
        for workers in [1, 2] {
            MAX_IN_FLIGHT.store(0, Ordering::Relaxed);
            HOOK_RUNS.store(0, Ordering::Relaxed);
            let took = run(workers, threads);
            let per_second = threads as f64 / took.as_secs_f64();
            println!(
                "  {workers} worker(s): {:>8.0} runs/s, {:>9.0} hook runs/s ({:.2} s); at most {} hooks suspended inside a dispatch at once",
                per_second,
                HOOK_RUNS.load(Ordering::Relaxed) as f64 / took.as_secs_f64(),
                took.as_secs_f64(),
                MAX_IN_FLIGHT.load(Ordering::Relaxed)
            );
            most_suspended = most_suspended.max(MAX_IN_FLIGHT.load(Ordering::Relaxed));
            if workers == 1 { one.push(per_second) } else { two.push(per_second) }
        }
    }
    let (one, two) = (median(one), median(two));
    println!(
        "\nThroughput, median: 1 worker {one:.0} runs/s, 2 workers {two:.0} runs/s; 2-vs-1 ratio {:.2}x",
        two / one
    );
    println!(
        "With {cores} shared, noisy cores (and the bench's own main thread and the store's work on them), the \
         2-vs-1 ratio is bounded well below 2x; above 1x it shows dispatch does not serialize threads."
    );
    if most_suspended > 2 {
        println!(
            "Up to {most_suspended} hooks of different threads were suspended inside their dispatch at once, so no \
             lock is held across dispatch."
        );
    } else {
        println!(
            "At most {most_suspended} hooks were suspended inside a dispatch at once (no more than the workers): \
             no hook stayed suspended while another thread's hook ran, so this run does not show whether a \
             lock is held across dispatch."
        );
    }
}
