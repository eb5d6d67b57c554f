//! 1,000 threads of one runtime, each sent a message concurrently on a multi-threaded tokio
//! runtime, with a hook on every thread hook point that fires in a normal run: every message is
//! stored once, in its own thread, and every hook ran exactly as often as the run requires.

#[path = "../../../hooks-runtime/benches/echo_model/mod.rs"]
mod echo_model;
use crate::support_tools;

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use echo_model::EchoModel;
use hooks_runtime::prelude::*;
use hooks_runtime::store::ThreadStatus;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;
use support_tools::lock;

const THREADS: usize = 1_000;

/// The hook points of a run with one tool call, in the order of `COUNTS` columns.
const POINTS: [&str; 10] = [
    "after_thread_created",
    "after_system_message",
    "filter_messages",
    "prefilter_llm_history",
    "before_create_message",
    "after_create_message",
    "tool_call_started",
    "tool_call_done",
    "after_tool_call_success",
    "before_store_tool_result",
];
/// Per thread: a user message, the assistant's tool call, the tool result, the reply; two
/// model steps; one tool call.
const EXPECTED_PER_THREAD: [usize; 10] = [1, 2, 2, 2, 4, 4, 1, 1, 1, 1];

static COUNTS: Mutex<Option<HashMap<String, [usize; 10]>>> = Mutex::new(None);
/// Hooks that saw a value of another thread.
static FOREIGN: AtomicUsize = AtomicUsize::new(0);

fn count(state: &ThreadState, point: usize) {
    let mut counts = lock(&COUNTS);
    counts.get_or_insert_with(HashMap::new).entry(state.thread_id.clone()).or_default()[point] += 1;
}

fn tag(state: &ThreadState) -> String {
    state.arguments.get("tag").and_then(|tag| tag.as_str()).unwrap_or_default().to_owned()
}

fn check_own(state: &ThreadState, text: Option<&str>) {
    if let Some(text) = text
        && !text.is_empty()
        && !text.contains(&tag(state))
    {
        FOREIGN.fetch_add(1, Ordering::Relaxed);
    }
}

#[hook(after_thread_created, id = "c_thread_created")]
fn c_thread_created(state: &ThreadState) {
    count(state, 0);
}

#[hook(after_system_message, id = "c_system")]
async fn c_system(state: &ThreadState, _system: &str) -> Option<String> {
    tokio::task::yield_now().await;
    count(state, 1);
    None
}

#[hook(filter_messages, id = "c_filter")]
fn c_filter(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    count(state, 2);
    for message in &messages {
        check_own(state, message.content.as_deref());
    }
    messages
}

#[hook(prefilter_llm_history, id = "c_prefilter")]
async fn c_prefilter(state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    tokio::task::yield_now().await;
    count(state, 3);
    messages
}

#[hook(before_create_message, id = "c_before_create")]
async fn c_before_create(state: &ThreadState, mut message: MessageRecord) -> MessageRecord {
    tokio::task::yield_now().await;
    count(state, 4);
    check_own(state, message.content.as_deref());
    message.extra.insert("thread_tag".into(), json!(tag(state)));
    message
}

#[hook(after_create_message, id = "c_after_create")]
fn c_after_create(state: &ThreadState, message: &MessageRecord) {
    count(state, 5);
    check_own(state, message.content.as_deref());
}

#[hook(tool_call_started, id = "c_started")]
fn c_started(state: &ThreadState, call: &HookToolCall, _progress: Option<&str>) {
    count(state, 6);
    check_own(state, Some(&call.id));
}

#[hook(tool_call_done, id = "c_done")]
async fn c_done(state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    tokio::task::yield_now().await;
    count(state, 7);
    check_own(state, Some(&call.id));
    check_own(state, result.result.as_deref());
}

#[hook(after_tool_call_success, id = "c_success")]
fn c_success(state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    count(state, 8);
    check_own(state, result.result.as_deref());
    None
}

#[hook(before_store_tool_result, id = "c_store")]
fn c_store(state: &ThreadState, _call: &ToolCallRecord, result: HookToolResult) -> HookToolResult {
    count(state, 9);
    check_own(state, result.result.as_deref());
    result
}

define_prompt! {
    name: c_prompt,
    model: "echo",
    prompt: "Echo through the tool.",
    tools: ["c_echo"],
    hooks: [
        c_system, c_filter, c_prefilter, c_before_create, c_after_create,
        c_started, c_done, c_success, c_store,
    ],
}

define_agent! {
    name: c_agent,
    side_a: { prompt: c_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
    hooks: [c_thread_created],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrency_1000_threads_store_every_message_once_and_run_every_hook_exactly() {
    let runtime = Runtime::builder()
        .agent::<c_agent>()
        .model("echo", EchoModel::new("c_echo").interleaved())
        .tool(FnTool::new("c_echo", "Echoes its tag.", |args| async move {
            tokio::task::yield_now().await;
            HookToolResult::success(format!("echo:{}", args["tag"].as_str().unwrap_or_default()))
        }))
        .build()
        .unwrap();

    let tasks: Vec<_> = (0..THREADS)
        .map(|i| {
            let runtime = runtime.clone();
            tokio::spawn(async move {
                let tag = format!("thread-{i:04}");
                let mut arguments = serde_json::Map::new();
                arguments.insert("tag".into(), json!(tag));
                let options = ThreadOptions { user_id: None, arguments };
                let thread = runtime.create_thread("c_agent", options).await.unwrap();
                let outcome = thread.send(&tag).await.unwrap();
                (tag, thread, outcome)
            })
        })
        .collect();
    let mut results = Vec::with_capacity(THREADS);
    for task in tasks {
        results.push(task.await.expect("no task panicked"));
    }
    // How fast: the concurrency bench (hooks-runtime/benches/concurrency.rs) measures it.

    let mut message_ids = HashSet::new();
    let mut thread_ids = HashSet::new();
    for (tag, thread, outcome) in &results {
        assert_eq!(outcome.status, ThreadStatus::Idle, "{tag}");
        let reply = format!("done:echo:{tag}");
        assert_eq!(outcome.reply.as_deref(), Some(reply.as_str()), "{tag}");
        assert!(thread_ids.insert(thread.id().to_owned()));

        let messages = thread.messages().await.unwrap();
        let call_id = format!("call_{tag}");
        let echo = format!("echo:{tag}");
        let shape: Vec<(Role, Option<&str>, Option<&str>)> = messages
            .iter()
            .map(|message| (message.role, message.content.as_deref(), message.tool_call_id.as_deref()))
            .collect();
        assert_eq!(
            shape,
            [
                (Role::User, Some(tag.as_str()), None),
                (Role::Assistant, None, None),
                (Role::Tool, Some(echo.as_str()), Some(call_id.as_str())),
                (Role::Assistant, Some(reply.as_str()), None),
            ],
            "{tag}: every message stored once, in order, in its own thread"
        );
        assert!(messages[1].tool_calls.as_deref().unwrap().contains(&call_id), "{tag}");
        for message in &messages {
            assert_eq!(message.extra_str("thread_tag"), Some(tag.as_str()), "{tag}: written through its own hooks");
            assert!(message_ids.insert(message.id.clone()), "message id {} stored twice", message.id);
        }
    }
    assert_eq!(message_ids.len(), THREADS * 4);

    assert_eq!(FOREIGN.load(Ordering::Relaxed), 0, "a hook saw another thread's data");
    let counts = lock(&COUNTS).take().unwrap_or_default();
    assert_eq!(counts.len(), THREADS, "every thread ran hooks, under its own id");
    for id in &thread_ids {
        let per_thread = counts.get(id).copied().unwrap_or_default();
        assert_eq!(per_thread, EXPECTED_PER_THREAD, "hook counts of {id} ({POINTS:?})");
    }
    let totals: Vec<usize> = (0..POINTS.len()).map(|point| counts.values().map(|c| c[point]).sum()).collect();
    let expected: Vec<usize> = EXPECTED_PER_THREAD.iter().map(|n| n * THREADS).collect();
    assert_eq!(totals, expected, "{POINTS:?}");
}
