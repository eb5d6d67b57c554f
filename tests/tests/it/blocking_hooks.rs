//! Sync hooks that block (issue: two sync hooks sleeping on a 2-worker runtime stopped every
//! thread). A hook marked `blocking` lets its worker go first, so other threads keep making
//! progress while it blocks; and one that runs past its timeout is a timed-out hook.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

use crate::support_tools;
use support_tools::LogCapture;

const BLOCK_FOR: Duration = Duration::from_secs(3);
static BLOCKING_STARTED: AtomicUsize = AtomicUsize::new(0);

/// Blocks its thread, as a hook doing synchronous file or network I/O does.
#[hook(filter_messages, id = "reads_a_slow_disk", blocking)]
fn reads_a_slow_disk(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    BLOCKING_STARTED.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(BLOCK_FOR);
}

/// Blocks past its own timeout, then changes the value: the change is kept (in place) but the
/// hook is logged as timed out.
#[hook(before_store_tool_result, id = "blocks_past_its_timeout", blocking, timeout_ms = 50)]
fn blocks_past_its_timeout(_state: &ThreadState, _call: &ToolCallRecord, result: HookToolResult) -> HookToolResult {
    std::thread::sleep(Duration::from_millis(300));
    HookToolResult::success(format!("late: {}", result.result.unwrap_or_default()))
}

define_prompt! { name: slow_prompt, model: "scripted", prompt: "p", hooks: [reads_a_slow_disk] }
define_agent! { name: slow_agent, side_a: { prompt: slow_prompt, stop_on_response: true } }
define_prompt! { name: quick_prompt, model: "scripted", prompt: "p" }
define_agent! { name: quick_agent, side_a: { prompt: quick_prompt, stop_on_response: true } }
define_prompt! { name: late_prompt, model: "scripted", prompt: "p", tools: ["echo"], hooks: [blocks_past_its_timeout] }
define_agent! { name: late_agent, side_a: { prompt: late_prompt, stop_on_response: true } }

fn runtime() -> Runtime {
    let replies = (0..8).map(|_| ScriptedResponse::text("ok"));
    Runtime::builder()
        .agent::<slow_agent>()
        .agent::<quick_agent>()
        .model("scripted", ScriptedModel::new(replies))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_hook_on_every_worker_leaves_other_threads_running() {
    let runtime = runtime();
    // Two threads whose hooks block both workers of this runtime.
    let mut slow = Vec::new();
    for _ in 0..2 {
        let thread = runtime.create_thread("slow_agent", ThreadOptions::default()).await.unwrap();
        slow.push(tokio::spawn(async move { thread.send("read the disk").await.unwrap() }));
    }
    let waiting_since = Instant::now();
    while BLOCKING_STARTED.load(Ordering::SeqCst) < 2 {
        assert!(waiting_since.elapsed() < Duration::from_secs(20), "the blocking hooks never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    // A third thread, run as a task: it needs a worker.
    let started = Instant::now();
    let quick = runtime.create_thread("quick_agent", ThreadOptions::default()).await.unwrap();
    let reply = tokio::spawn(async move { quick.send("hello").await.unwrap() }).await.unwrap();
    let took = started.elapsed();
    assert_eq!(reply.reply.as_deref(), Some("ok"));
    assert!(
        took < BLOCK_FOR / 2,
        "another thread waited {took:?} for a worker while blocking hooks ran (they block for {BLOCK_FOR:?})"
    );
    for run in slow {
        assert_eq!(run.await.unwrap().reply.as_deref(), Some("ok"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_hook_past_its_timeout_is_a_timed_out_hook() {
    let logs = LogCapture::start();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "echo", r#"{"text":"hi"}"#),
        ScriptedResponse::text("done"),
    ]);
    let runtime = Runtime::builder()
        .agent::<late_agent>()
        .model("scripted", model)
        .tool(hooks_runtime::tool::FnTool::new("echo", "Echoes.", |_| async { HookToolResult::success("hi") }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("late_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("done"));
    let tool = thread.messages().await.unwrap().into_iter().find(|m| m.role == Role::Tool).unwrap();
    // By value: the late answer is discarded and the value before the hook stored.
    assert_eq!(tool.content.as_deref(), Some("hi"));
    let text = logs.text();
    assert!(
        text.contains("blocks_past_its_timeout") && text.contains("timed out after 50 ms"),
        "the hook is logged as timed out:\n{text}"
    );
}
