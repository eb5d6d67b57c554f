//! Sync hooks that block (issue: two sync hooks sleeping on a 2-worker runtime stopped every
//! thread). A hook marked `blocking` lets its worker go first, so other threads keep making
//! progress while it blocks; and one that runs past its timeout is a timed-out hook.

use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

use crate::support_tools;
use support_tools::LogCapture;

/// How long a gated hook waits at most: only a broken runtime makes it wait that long, and it
/// then tells (`released_by_the_test` false), so nothing hangs.
const GATE_PATIENCE: Duration = Duration::from_secs(30);

/// Holds blocking hooks until the test opens it, and counts the hooks that reached it.
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

struct GateState {
    arrived: usize,
    open: bool,
    /// Hooks that left because they waited `GATE_PATIENCE` in vain.
    gave_up: usize,
}

impl Gate {
    const fn new() -> Self {
        Gate { state: Mutex::new(GateState { arrived: 0, open: false, gave_up: 0 }), changed: Condvar::new() }
    }

    /// A hook's side: arrives, then blocks its thread until the gate opens.
    fn pass(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.arrived += 1;
        self.changed.notify_all();
        let (mut state, waited) = self
            .changed
            .wait_timeout_while(state, GATE_PATIENCE, |state| !state.open)
            .unwrap_or_else(PoisonError::into_inner);
        if waited.timed_out() {
            state.gave_up += 1;
        }
    }

    /// The test's side: waits (on its own thread) until `count` hooks block at the gate.
    fn wait_for(&self, count: usize) {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (_state, waited) = self
            .changed
            .wait_timeout_while(state, GATE_PATIENCE, |state| state.arrived < count)
            .unwrap_or_else(PoisonError::into_inner);
        assert!(!waited.timed_out(), "the blocking hooks never started");
    }

    /// Opens the gate; returns how many hooks were still waiting at it.
    fn open(&self) -> usize {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.open = true;
        self.changed.notify_all();
        state.arrived - state.gave_up
    }
}

static DISK: Gate = Gate::new();

/// Blocks its thread, as a hook doing synchronous file or network I/O does, until the test
/// opens the gate.
#[hook(filter_messages, id = "reads_a_slow_disk", blocking)]
fn reads_a_slow_disk(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    DISK.pass();
}

/// Blocks past its own timeout, then changes the value: by value, the late answer is discarded
/// and the hook is logged as timed out. A sync function cannot be interrupted, so the run waits
/// for it; the sleep is the slow call it stands for, timed by dispatch's own clock reading.
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
    DISK.wait_for(2);
    // A third thread, run as a task while both hooks block: it needs a worker. Were the
    // workers blocked, it would finish only once the hooks gave up waiting at the gate.
    let quick = runtime.create_thread("quick_agent", ThreadOptions::default()).await.unwrap();
    let reply = tokio::spawn(async move { quick.send("hello").await.unwrap() }).await.unwrap();
    assert_eq!(reply.reply.as_deref(), Some("ok"));
    assert_eq!(DISK.open(), 2, "another thread waited for a worker while blocking hooks ran");
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
