//! E9: a panic in a tool-call listener or the tool authorizer is that listener's failure, and no
//! run ends with its thread left `running`: not a run whose caller dropped it (a timeout), not
//! one a panic unwound, in memory and in the store (in-memory and SQLite).

use crate::support;
use crate::support_store::InterceptedInserts;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hooks_runtime::model::{Model, ModelError, ModelRequest, ModelStream, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, MessageStore, SqliteStore, StopReason, StoreError, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::tool::{ToolCallListener, ToolCallOutcome};
use hooks_runtime::{RunError, Runtime, Thread, ThreadEvent, ThreadOptions};
use support::capture_logs;
use tokio::sync::Notify;

define_prompt! { name: e9_prompt, model: "scripted", prompt: "Work.", tools: ["e9_tool"] }
define_agent! { name: e9_agent, side_a: { prompt: e9_prompt, stop_on_response: true }, side_b: { human: true } }

fn cancelled() -> ThreadStatus {
    ThreadStatus::Stopped(StopReason::Cancelled)
}

/// A tool that counts its calls and answers at once.
fn counting_tool(calls: &Arc<AtomicUsize>) -> FnTool {
    let calls = calls.clone();
    FnTool::new("e9_tool", "Works.", move |_| {
        calls.fetch_add(1, Ordering::SeqCst);
        async { HookToolResult::success("worked") }
    })
}

/// A tool that tells `started` it runs, then never answers in a test's lifetime.
fn hanging_tool(started: &Arc<Notify>) -> FnTool {
    let started = started.clone();
    FnTool::new("e9_tool", "Hangs.", move |_| {
        started.notify_one();
        async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            HookToolResult::success("too late")
        }
    })
}

fn tool_then_reply() -> ScriptedModel {
    ScriptedModel::new([ScriptedResponse::tool_call("call_1", "e9_tool", "{}"), ScriptedResponse::text("done")])
}

async fn tool_result(thread: &Thread) -> HookMessage {
    let messages = thread.messages().await.unwrap();
    messages.into_iter().find(|message| message.role == Role::Tool).expect("a tool message")
}

// ---------------------------------------------------------------------------------------------
// A panicking listener.

struct PanickingListener {
    before: bool,
    after: bool,
}

#[hooks_runtime::async_trait]
impl ToolCallListener for PanickingListener {
    async fn before_tool_call(&self, _tool: &str) {
        if self.before {
            panic!("listener bug before the call");
        }
    }

    async fn after_tool_call(&self, _tool: &str, _outcome: &ToolCallOutcome) {
        if self.after {
            panic!("listener bug after the call");
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn e9_panicking_tool_call_listener_is_its_own_failure() {
    let (logs, _guard) = capture_logs();
    for (before, after) in [(true, false), (false, true), (true, true)] {
        let calls = Arc::new(AtomicUsize::new(0));
        let runtime = Runtime::builder()
            .agent::<e9_agent>()
            .model("scripted", tool_then_reply())
            .tool(counting_tool(&calls))
            .build()
            .unwrap();
        use hooks_runtime::tool::ToolCallListenerTarget;
        runtime.agent("e9_agent").unwrap().set_tool_call_listener(Some(Arc::new(PanickingListener { before, after })));
        let thread = runtime.create_thread("e9_agent", ThreadOptions::default()).await.unwrap();

        // Spawned, as a server would run it: a panic escaping `send` would be a JoinError here.
        let run = thread.clone();
        let outcome = tokio::spawn(async move { run.send("go").await }).await.expect("no panic escapes send").unwrap();

        assert_eq!((outcome.status, outcome.reply.as_deref()), (ThreadStatus::Idle, Some("done")), "{before} {after}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "the tool ran despite the listener");
        assert_eq!(tool_result(&thread).await.content.as_deref(), Some("worked"));
        assert_eq!(thread.status(), ThreadStatus::Idle);
    }
    let lines = logs.lines_with("[Hooks] ✗");
    let before_lines = lines.iter().filter(|line| line.contains("`before_tool_call`")).count();
    let after_lines = lines.iter().filter(|line| line.contains("`after_tool_call`")).count();
    assert_eq!((before_lines, after_lines), (2, 2), "{lines:#?}");
    assert!(lines.iter().all(|line| line.contains("agent `e9_agent` panicked")), "{lines:#?}");
}

// ---------------------------------------------------------------------------------------------
// A panicking authorizer.

#[tokio::test(flavor = "current_thread")]
async fn e9_panicking_authorizer_denies_the_call_and_the_run_goes_on() {
    let (logs, _guard) = capture_logs();
    let calls = Arc::new(AtomicUsize::new(0));
    let runtime = Runtime::builder()
        .agent::<e9_agent>()
        .model("scripted", tool_then_reply())
        .tool(counting_tool(&calls))
        .authorize_tools(|_state, _call| panic!("authorizer bug"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e9_agent", ThreadOptions::default()).await.unwrap();

    let run = thread.clone();
    let outcome = tokio::spawn(async move { run.send("go").await }).await.expect("no panic escapes send").unwrap();

    assert_eq!((outcome.status, outcome.reply.as_deref()), (ThreadStatus::Idle, Some("done")));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "a call the authorizer could not decide is not run");
    let result = tool_result(&thread).await;
    let text = result.content.as_deref().unwrap_or_default();
    assert!(text.contains("e9_tool") && text.contains("not authorized"), "{text}");
    assert_eq!(result.extra.get("tool_status").and_then(|status| status.as_str()), Some("error"));
    let lines = logs.lines_with("[Hooks] ✗");
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(lines[0].contains("the tool authorizer (`authorize_tools`) of agent `e9_agent` panicked"), "{lines:#?}");
}

// ---------------------------------------------------------------------------------------------
// A dropped `send`.

/// Waits (generously) until the store says `status` for the thread.
async fn stored_status_becomes(store: &dyn MessageStore, thread_id: &str, status: &ThreadStatus) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let stored = store.load_thread(thread_id).await.unwrap().expect("the thread is stored").status;
        if &stored == status {
            return;
        }
        assert!(Instant::now() < deadline, "the store still says {stored:?}, expected {status:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Drops a `send` stuck in a hanging tool (as `tokio::time::timeout` would), then checks
/// memory, events and `store`; then runs again on the same thread, which must not be stuck and
/// must end `idle` everywhere.
async fn dropped_send_settles(runtime: &Runtime, started: &Notify, store: &dyn MessageStore) {
    let thread = runtime.create_thread("e9_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();

    tokio::select! {
        outcome = thread.send("go") => panic!("the send ended: {outcome:?}"),
        () = started.notified() => {}
    }

    assert_eq!(thread.status(), cancelled(), "settled in memory at once");
    let mut statuses = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::Status { status } = event {
            statuses.push(status);
        }
    }
    assert_eq!(statuses, [ThreadStatus::Running, cancelled()], "subscribers hear it");
    stored_status_becomes(store, thread.id(), &cancelled()).await;

    // The thread is free: the next run goes through and its status is the last one stored.
    let outcome =
        tokio::time::timeout(Duration::from_secs(20), thread.send("again")).await.expect("not stuck").unwrap();
    assert_eq!((outcome.status, outcome.reply.as_deref()), (ThreadStatus::Idle, Some("done")));
    stored_status_becomes(store, thread.id(), &ThreadStatus::Idle).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e9_dropped_send_settles_the_thread_in_memory_and_the_memory_store() {
    let started = Arc::new(Notify::new());
    let tool = hanging_tool(&started);
    let runtime =
        Runtime::builder().agent::<e9_agent>().model("scripted", tool_then_reply()).tool(tool).build().unwrap();
    dropped_send_settles(&runtime, &started, runtime.store().as_ref()).await;
}

static NEXT_DB: AtomicUsize = AtomicUsize::new(0);

fn temp_db() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agent-hooks-cancellation-{}-{}",
        std::process::id(),
        NEXT_DB.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("threads.db")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e9_dropped_send_settles_the_thread_in_sqlite() {
    let path = temp_db();
    let started = Arc::new(Notify::new());
    let runtime = Runtime::builder()
        .agent::<e9_agent>()
        .model("scripted", tool_then_reply())
        .tool(hanging_tool(&started))
        .store(SqliteStore::open(&path).unwrap())
        .build()
        .unwrap();
    // Read back through a connection of its own: what another process would see.
    let reader = SqliteStore::open(&path).unwrap();
    dropped_send_settles(&runtime, &started, &reader).await;
    drop(runtime);
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

// ---------------------------------------------------------------------------------------------
// A run whose custom model panics: the runtime's panic path catches it and settles the run.

struct PanickingModel;

#[hooks_runtime::async_trait]
impl Model for PanickingModel {
    async fn stream(&self, _request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        panic!("model bug");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e9_run_whose_model_panics_is_settled_failed_panicked() {
    let runtime = Runtime::builder()
        .agent::<e9_agent>()
        .model("scripted", PanickingModel)
        .tool(counting_tool(&Arc::default()))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e9_agent", ThreadOptions::default()).await.unwrap();
    let run = thread.clone();
    let joined = tokio::spawn(async move { run.send("go").await }).await;
    let outcome = joined.expect("the model's panic is caught by the runtime").unwrap();
    let failed = ThreadStatus::Failed(FailReason::Panicked);
    assert_eq!(outcome.status, failed);
    assert_eq!(outcome.error.as_ref().map(RunError::message), Some("the model `scripted` panicked"));
    assert_eq!(thread.status(), failed);
    stored_status_becomes(runtime.store().as_ref(), thread.id(), &failed).await;
}

// ---------------------------------------------------------------------------------------------
// A run that ends with a store error part way.

#[tokio::test(flavor = "current_thread")]
async fn e9_run_ended_by_a_store_error_is_not_left_running() {
    // The in-memory store, but inserting a message fails once `failing` is set.
    let failing = Arc::new(AtomicBool::new(false));
    let fails = failing.clone();
    let store = Arc::new(InterceptedInserts::new(Box::new(move || {
        let fail = fails.load(Ordering::SeqCst);
        Box::pin(async move { if fail { Err(StoreError::other("disk full")) } else { Ok(()) } })
    })));
    let runtime = Runtime::builder()
        .agent::<e9_agent>()
        .model("scripted", tool_then_reply())
        .tool(counting_tool(&Arc::default()))
        .store(store.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread("e9_agent", ThreadOptions::default()).await.unwrap();
    failing.store(true, Ordering::SeqCst);

    let error = thread.send("go").await.unwrap_err();

    assert!(error.to_string().contains("disk full"), "{error}");
    let failed = ThreadStatus::Failed(FailReason::StoreError);
    assert_eq!(thread.status(), failed);
    assert_eq!(store.load_thread(thread.id()).await.unwrap().unwrap().status, failed);
}
