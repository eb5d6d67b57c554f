//! Crashes: a child process accepts messages (`queue_message`, printing `ACK` once each is
//! accepted) and runs them (a model step that calls a tool, the tool, a reply) until it is killed
//! with SIGKILL at a random moment; the next child recovers at its first use. After every round
//! the store is checked: 0 acknowledged inputs lost, 0 stored twice; at the end, after one more
//! recovery, 0 threads left `running` or with inputs, and the history provider-valid.
//!
//! The child is this test binary itself, running the ignored test `crash_child`, told what to
//! do by environment variables.

#[cfg(feature = "postgres")]
use crate::support_store;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hooks_runtime::Runtime;
use hooks_runtime::model::{Model, ModelError, ModelEvent, ModelRequest, ModelStream};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{MessageStore, SqliteStore, ThreadRecord, ThreadStatus};
use hooks_runtime::tool::FnTool;

define_prompt! { name: crash_prompt, model: "m", prompt: "Work.", tools: ["crash_tool"] }
define_agent! { name: crash_agent, side_a: { prompt: crash_prompt, stop_on_response: true }, side_b: { human: true } }

/// The store the child opens: `sqlite:<path>` or `postgres:<schema>`.
const CHILD_STORE: &str = "HOOKS_CRASH_CHILD_STORE";
/// The thread the child sends to, and the round, for unique message texts.
const CHILD_THREAD: &str = "HOOKS_CRASH_CHILD_THREAD";
const CHILD_ROUND: &str = "HOOKS_CRASH_CHILD_ROUND";
const THREAD_ID: &str = "thread_crash";
const ROUNDS: u64 = 20;

/// A model that calls the tool for a user message and replies after the tool's result, each
/// step streamed in pieces a few milliseconds apart.
struct ToolThenReply;

struct Pieces(Vec<ModelEvent>);

#[hooks_runtime::async_trait]
impl ModelStream for Pieces {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        tokio::time::sleep(Duration::from_millis(3)).await;
        (!self.0.is_empty()).then(|| Ok(self.0.remove(0)))
    }
}

#[hooks_runtime::async_trait]
impl Model for ToolThenReply {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let last = request.messages.last().map(|m| m.role.clone()).unwrap_or_default();
        let events = if last == "tool" {
            vec![ModelEvent::TextDelta("do".into()), ModelEvent::TextDelta("ne".into())]
        } else {
            let id = format!("call_{}", SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos());
            vec![
                ModelEvent::ToolCallStart { index: 0, id, name: "crash_tool".into() },
                ModelEvent::ToolCallArguments { index: 0, fragment: "{}".into() },
                ModelEvent::ToolCallEnd { index: 0 },
            ]
        };
        Ok(Box::new(Pieces(events)))
    }
}

fn runtime_on(store: Arc<dyn MessageStore>) -> Runtime {
    let tool = FnTool::new("crash_tool", "Works.", |_| async {
        tokio::time::sleep(Duration::from_millis(8)).await;
        HookToolResult::success("worked")
    });
    Runtime::builder().agent::<crash_agent>().model("m", ToolThenReply).tool(tool).store(store).build().unwrap()
}

#[cfg(feature = "postgres")]
fn postgres_options(schema: &str) -> hooks_runtime::store::PostgresOptions {
    hooks_runtime::store::PostgresOptions::new()
        .schema(schema)
        .max_connections(4)
        .run_lease_ttl(Duration::from_millis(600))
        .recovery_sweep(Duration::from_millis(100))
}

async fn open_store(spec: &str) -> Arc<dyn MessageStore> {
    if let Some(path) = spec.strip_prefix("sqlite:") {
        return Arc::new(SqliteStore::open(path).unwrap());
    }
    #[cfg(feature = "postgres")]
    if let Some(schema) = spec.strip_prefix("postgres:") {
        let url =
            std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        let store = hooks_runtime::store::PostgresStore::connect_with(&url, postgres_options(schema))
            .await
            .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
        return Arc::new(store);
    }
    panic!("unknown child store `{spec}`")
}

/// The child: accepts a message every few milliseconds and runs each in the background, until
/// it is killed. Not a test of its own; the crash tests run it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of the crash tests, which run it"]
async fn crash_child() {
    let (Ok(spec), Ok(thread_id), Ok(round)) =
        (std::env::var(CHILD_STORE), std::env::var(CHILD_THREAD), std::env::var(CHILD_ROUND))
    else {
        return;
    };
    let runtime = runtime_on(open_store(&spec).await);
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let mut stdout = std::io::stdout();
    for i in 0.. {
        let text = format!("r{round}-m{i}");
        let input = thread.queue_message(MessageRecord::new(Role::User, text.as_str())).await.unwrap();
        writeln!(stdout, "ACK {text}").unwrap();
        stdout.flush().unwrap();
        let runner = thread.clone();
        tokio::spawn(async move { runner.run_input(&input).await });
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
}

/// A small random number from the clock, for kill points that differ per round and run.
fn random_below(bound: u64) -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    (nanos.wrapping_mul(6_364_136_223_846_793_005) >> 33) % bound
}

/// Runs one child until SIGKILL at a random point; returns the texts it acknowledged.
fn crash_round(spec: &str, round: u64) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["crash_recovery::crash_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_STORE, spec)
        .env(CHILD_THREAD, THREAD_ID)
        .env(CHILD_ROUND, round.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| line.strip_prefix("ACK ").map(str::to_owned))
            .collect::<Vec<_>>()
    });
    std::thread::sleep(Duration::from_millis(60 + random_below(340)));
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    reader.join().unwrap()
}

/// Each stored user text and how often it is stored.
async fn stored_user_texts(store: &dyn MessageStore) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for message in store.messages(THREAD_ID).await.unwrap() {
        if message.role == Role::User {
            *counts.entry(message.content.unwrap_or_default()).or_default() += 1;
        }
    }
    counts
}

/// Figures of one crash test, printed for docs/reliability.md.
#[derive(Debug, Default)]
struct Figures {
    rounds: u64,
    acknowledged: usize,
    lost: usize,
    duplicated: usize,
    left_running: usize,
    /// Tool calls a killed run left open, answered by recovery with an error result.
    interrupted_calls: usize,
}

async fn crash_test(spec: &str, store: Arc<dyn MessageStore>) -> Figures {
    let started = Instant::now();
    let record = ThreadRecord::new(THREAD_ID, "crash_agent", 1);
    store.create_thread(&record).await.unwrap();
    let mut figures = Figures { rounds: ROUNDS, ..Figures::default() };
    let mut acknowledged = Vec::new();
    for round in 0..ROUNDS {
        acknowledged.extend(crash_round(spec, round));
    }
    figures.acknowledged = acknowledged.len();

    // The last child's runs, recovered here: settled, inboxes run (on PostgreSQL once the dead
    // child's lease has expired).
    let runtime = runtime_on(store.clone());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut recovery = runtime.recover().await.unwrap();
        recovery.wait_for_inboxes().await;
        let status = store.load_thread(THREAD_ID).await.unwrap().unwrap().status;
        if store.unsettled_threads().await.unwrap().is_empty()
            && store.inbox().unwrap().pending_inputs(THREAD_ID).await.unwrap().is_empty()
            && status != ThreadStatus::Running
        {
            break;
        }
        assert!(Instant::now() < deadline, "recovery did not finish: {status:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let stored = stored_user_texts(store.as_ref()).await;
    figures.lost = acknowledged.iter().filter(|text| !stored.contains_key(*text)).count();
    figures.duplicated = stored.values().filter(|count| **count > 1).count();
    figures.left_running =
        usize::from(store.load_thread(THREAD_ID).await.unwrap().unwrap().status == ThreadStatus::Running);
    let messages = store.messages(THREAD_ID).await.unwrap();
    figures.interrupted_calls = messages
        .iter()
        .filter(|m| m.role == Role::Tool && m.content.as_deref().is_some_and(|text| text.contains("interrupted")))
        .count();
    for (at, message) in messages.iter().enumerate() {
        let Some(calls) = message.tool_calls.as_deref() else { continue };
        for call in serde_json::from_str::<Vec<HookToolCall>>(calls).unwrap() {
            assert!(
                messages[at..].iter().any(|m| m.tool_call_id.as_deref() == Some(call.id.as_str())),
                "tool call {} has no result",
                call.id
            );
        }
    }
    println!(
        "crash test on {}, {} rounds: {figures:?}, {} messages stored, {:.1} s",
        spec.split(':').next().unwrap_or_default(),
        figures.rounds,
        messages.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(figures.acknowledged >= ROUNDS as usize, "the children acknowledged too little to test: {figures:?}");
    assert_eq!((figures.lost, figures.duplicated, figures.left_running), (0, 0, 0), "{figures:?}");
    figures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_run_loses_no_accepted_input_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("agent-hooks-crash-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("threads.db");
    let spec = format!("sqlite:{}", path.display());
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&path).unwrap());
    crash_test(&spec, store).await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_run_loses_no_accepted_input_on_postgres() {
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let store = hooks_runtime::store::PostgresStore::connect_with(&url, postgres_options(&schema))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    crash_test(&format!("postgres:{schema}"), Arc::new(store)).await;
}
