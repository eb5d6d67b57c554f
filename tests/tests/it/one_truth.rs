//! One thread, one truth (O1-O8): every handle, process and crash sees the same thread.
//!
//! "Another process" is a child process running this binary's ignored `live_run_child` where
//! liveness matters (O3: the child holds a live run while this process opens the file), and a
//! second store opened on the same SQLite file elsewhere: each open store is an owner of its
//! own, as a process is.

#[cfg(feature = "postgres")]
use crate::support_store;
use crate::support_tools::log_signal;

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hooks_runtime::approvals::{ApprovalChoice, ApprovalDecision, ApprovalError, ApprovalOutcome, ApprovalState};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
use serde_json::{Value, json};
use tracing::instrument::WithSubscriber as _;

define_prompt! { name: front_prompt, model: "m", prompt: "Front desk.", tools: ["billing_agent", "pay"] }
define_agent! { name: front_agent, side_a: { prompt: front_prompt, stop_on_response: true } }
define_prompt! { name: billing_prompt, model: "m", prompt: "Billing desk.", tools: ["pay"] }
define_agent! { name: billing_agent, side_a: { prompt: billing_prompt, stop_on_response: true } }

/// A payment tool that waits for a person and appends a line to `runs` each time it runs.
fn pay_tool(runs: PathBuf) -> FnTool {
    FnTool::new("pay", "Pays.", move |_arguments: Value| {
        let runs = runs.clone();
        async move {
            let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&runs).unwrap();
            writeln!(file, "ran").unwrap();
            HookToolResult::success("paid")
        }
    })
    .with_approval(|_| ToolDecision::ask("payments need a person"))
}

fn runs_of(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("one-truth-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn runtime(store: Arc<dyn MessageStore>, model: ScriptedModel, runs: PathBuf) -> Runtime {
    Runtime::builder()
        .agent::<front_agent>()
        .agent::<billing_agent>()
        .model("m", model)
        .tool(pay_tool(runs))
        .store(store)
        .build()
        .unwrap()
}

fn hands_off() -> ScriptedResponse {
    ScriptedResponse::tool_call("call_handoff", "billing_agent", r#"{"message":"a refund, please"}"#)
}

fn asks_to_pay() -> ScriptedResponse {
    ScriptedResponse::tool_call("call_pay", "pay", r#"{"amount":300}"#)
}

/// The system prompt of the model's `n`th request.
fn system_prompt(model: &ScriptedModel, n: usize) -> String {
    model.requests()[n].messages[0].content.clone().unwrap_or_default()
}

fn open_sqlite(path: &Path) -> Arc<dyn MessageStore> {
    Arc::new(SqliteStore::open(path).unwrap())
}

// ---------------------------------------------------------------------------------------------
// O1: one live state per thread in a process.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o1_every_handle_of_a_thread_sees_a_handoff_a_value_and_every_event_at_once() {
    let dir = scratch("o1");
    let model = ScriptedModel::new([hands_off()]);
    let runtime = runtime(Arc::new(InMemoryStore::new()), model, dir.join("runs"));
    let first = runtime.create_thread("front_agent", ThreadOptions::default()).await.unwrap();
    let second = runtime.open_thread(first.id()).await.unwrap();
    let mut events = second.subscribe();
    let outcome = first.send("I was charged twice").await.unwrap();
    assert_eq!(outcome.handed_off_to.as_deref(), Some("billing_agent"), "{outcome}");
    assert_eq!(second.agent_name(), "billing_agent", "the other handle runs the new agent");
    assert_eq!(runtime.open_thread(first.id()).await.unwrap().agent_name(), "billing_agent");
    first.set_value("ticket", json!(42)).await.unwrap();
    assert_eq!(second.value("ticket"), Some(json!(42)));
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    assert!(seen.iter().any(|event| matches!(event, ThreadEvent::Status { status: ThreadStatus::Running })));
    assert!(seen.iter().any(|event| matches!(event, ThreadEvent::MessageCreated { .. })));
    assert_eq!(second.status(), ThreadStatus::Idle);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// O2: a handoff is stored with its message; a restart continues with the new agent.

async fn a_handoff_survives_a_restart(first_store: Arc<dyn MessageStore>, reopened: Arc<dyn MessageStore>) {
    let dir = scratch("o2");
    let thread_id = {
        let runtime = runtime(first_store, ScriptedModel::new([hands_off()]), dir.join("runs"));
        let thread = runtime.create_thread("front_agent", ThreadOptions::default()).await.unwrap();
        thread.send("I was charged twice").await.unwrap();
        thread.id().to_owned()
    };
    assert_eq!(reopened.load_thread(&thread_id).await.unwrap().unwrap().agent, "billing_agent");
    let model = ScriptedModel::new([ScriptedResponse::text("Refunded.")]);
    let restarted = runtime(reopened, model.clone(), dir.join("runs"));
    let thread = restarted.open_thread(&thread_id).await.unwrap();
    assert_eq!(thread.agent_name(), "billing_agent");
    let outcome = thread.send("and?").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Refunded."), "{outcome}");
    assert!(system_prompt(&model, 0).contains("Billing desk."), "{}", system_prompt(&model, 0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o2_a_handoff_survives_a_restart_in_memory() {
    let store: Arc<dyn MessageStore> = Arc::new(InMemoryStore::new());
    a_handoff_survives_a_restart(store.clone(), store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o2_a_handoff_survives_a_restart_on_sqlite() {
    let dir = scratch("o2-sqlite");
    let db = dir.join("threads.db");
    a_handoff_survives_a_restart(open_sqlite(&db), open_sqlite(&db)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o2_a_handoff_survives_a_restart_on_postgres() {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let connect = || async {
        let options = PostgresOptions::new().schema(&schema).max_connections(4);
        let store = PostgresStore::connect_with(&url, options)
            .await
            .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
        Arc::new(store) as Arc<dyn MessageStore>
    };
    a_handoff_survives_a_restart(connect().await, connect().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o2_a_live_handle_follows_a_handoff_and_a_value_made_in_another_process() {
    let dir = scratch("o2-live");
    let db = dir.join("threads.db");
    let model = ScriptedModel::new([ScriptedResponse::text("Billing here.")]);
    let here = runtime(open_sqlite(&db), model.clone(), dir.join("runs"));
    let live = here.create_thread("front_agent", ThreadOptions::default()).await.unwrap();

    let elsewhere = runtime(open_sqlite(&db), ScriptedModel::new([hands_off()]), dir.join("runs"));
    let other = elsewhere.open_thread(live.id()).await.unwrap();
    other.send("I was charged twice").await.unwrap();
    other.set_value("ticket", json!(7)).await.unwrap();

    // The next run here reads the thread back: the new agent answers, with the new value.
    let outcome = live.send("hello?").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Billing here."), "{outcome}");
    assert!(system_prompt(&model, 0).contains("Billing desk."), "{}", system_prompt(&model, 0));
    assert_eq!(live.agent_name(), "billing_agent");
    assert_eq!(live.value("ticket"), Some(json!(7)));
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// O3, O4: a second process on one SQLite file never settles a live run, and waits its turn.

const CHILD_DB: &str = "ONE_TRUTH_CHILD_DB";
const CHILD_THREAD: &str = "ONE_TRUTH_CHILD_THREAD";
const CHILD_GATE: &str = "ONE_TRUTH_CHILD_GATE";
/// Set when the child's store is PostgreSQL: the schema (`CHILD_DB` is then the URL).
const CHILD_PG_SCHEMA: &str = "ONE_TRUTH_CHILD_PG_SCHEMA";

define_prompt! { name: slow_prompt, model: "m", prompt: "Refunds.", tools: ["slow_refund"] }
define_agent! { name: slow_agent, side_a: { prompt: slow_prompt, stop_on_response: true } }

/// A refund that announces `TOOL RUNNING`, then waits until the file `gate` exists.
fn slow_refund(gate: PathBuf) -> FnTool {
    FnTool::new("slow_refund", "Refunds, slowly.", move |_arguments: Value| {
        let gate = gate.clone();
        async move {
            println!("TOOL RUNNING");
            while !gate.exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            HookToolResult::success("refunded")
        }
    })
}

fn slow_runtime(store: Arc<dyn MessageStore>, model: ScriptedModel, gate: PathBuf) -> Runtime {
    Runtime::builder().agent::<slow_agent>().model("m", model).tool(slow_refund(gate)).store(store).build().unwrap()
}

/// The child: runs a turn of the thread whose tool waits for the parent's gate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of the O3 test, which runs it"]
async fn live_run_child() {
    let (Ok(db), Ok(thread_id), Ok(gate)) =
        (std::env::var(CHILD_DB), std::env::var(CHILD_THREAD), std::env::var(CHILD_GATE))
    else {
        return;
    };
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_refund", "slow_refund", "{}"),
        ScriptedResponse::text("Refunded."),
    ]);
    let store = match std::env::var(CHILD_PG_SCHEMA) {
        Ok(schema) => open_postgres_with_a_long_lease(&db, &schema).await,
        Err(_) => open_sqlite(Path::new(&db)),
    };
    let runtime = slow_runtime(store, model, PathBuf::from(gate));
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let outcome = thread.send("refund order 7").await.unwrap();
    println!("CHILD DONE {}", outcome.status);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o3_a_second_process_on_one_sqlite_file_never_settles_a_live_run_and_waits_its_turn() {
    let dir = scratch("o3");
    let (db, gate) = (dir.join("threads.db"), dir.join("gate"));
    let store = open_sqlite(&db);
    let model = ScriptedModel::new([ScriptedResponse::text("Anything else?")]);
    let runtime = slow_runtime(store.clone(), model, gate.clone());
    let thread_id = runtime.create_thread("slow_agent", ThreadOptions::default()).await.unwrap().id().to_owned();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["one_truth::live_run_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB, &db)
        .env(CHILD_THREAD, &thread_id)
        .env(CHILD_GATE, &gate)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok);
    assert!(lines.by_ref().any(|line| line.ends_with("TOOL RUNNING")), "the child's tool runs");

    // This process recovers while the child's run is live: nothing of it is settled.
    let recovery = runtime.recover().await.unwrap();
    assert!(recovery.settled.is_empty() && recovery.continued.is_empty(), "{recovery:?}");
    assert_eq!(store.load_thread(&thread_id).await.unwrap().unwrap().status, ThreadStatus::Running);
    // A turn of this process waits for the child's run to end: the store says when it starts
    // waiting; until the gate opens, the child's run cannot end, so neither can this turn.
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let (logs, waiting) = log_signal("this run waits for its end");
    let second = tokio::spawn(async move { thread.send("one more thing").await }.with_subscriber(logs));
    tokio::time::timeout(Duration::from_secs(30), waiting.notified())
        .await
        .expect("the second process ran while the first one's run was live");
    assert!(!second.is_finished(), "the second process ran while the first one's run was live");
    std::fs::write(&gate, "go").unwrap();
    assert!(lines.any(|line| line.contains("CHILD DONE idle")), "the child's run ended idle");
    assert!(child.wait().unwrap().success());
    let outcome = second.await.unwrap().unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Anything else?"), "{outcome}");

    // O4: one result for the call, the tool's own; nothing was interrupted.
    let messages = store.messages(&thread_id).await.unwrap();
    let results: Vec<_> = messages.iter().filter(|m| m.tool_call_id.as_deref() == Some("call_refund")).collect();
    assert_eq!(results.len(), 1, "{messages:?}");
    assert_eq!(results[0].content.as_deref(), Some("refunded"));
    let texts: Vec<_> = messages.iter().filter_map(|m| m.content.as_deref()).collect();
    assert_eq!(texts, ["refund order 7", "refunded", "Refunded.", "one more thing", "Anything else?"]);
    drop(runtime);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A PostgreSQL store whose run leases last a minute, far longer than any test waits.
#[cfg(feature = "postgres")]
async fn open_postgres_with_a_long_lease(url: &str, schema: &str) -> Arc<dyn MessageStore> {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let options = PostgresOptions::new().schema(schema).max_connections(4).run_lease_ttl(Duration::from_secs(60));
    let store = PostgresStore::connect_with(url, options)
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    Arc::new(store)
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres_with_a_long_lease(_url: &str, _schema: &str) -> Arc<dyn MessageStore> {
    panic!("the PostgreSQL child needs feature `postgres`")
}

/// O3 on PostgreSQL: a process killed mid-run is known dead at once (its presence lock is gone
/// with its session), so its thread is taken over and its turn resumed long before its run's
/// lease (a minute here) would have expired; while it lived, nothing of its run was settled.
#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o3_a_killed_postgres_process_is_known_dead_before_its_lease_expires() {
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let dir = scratch("o3_pg");
    let gate = dir.join("gate");
    let store = open_postgres_with_a_long_lease(&url, &schema).await;
    let model = ScriptedModel::new([ScriptedResponse::text("The refund may not have gone through.")]);
    let runtime = slow_runtime(store.clone(), model, gate.clone());
    let thread_id = runtime.create_thread("slow_agent", ThreadOptions::default()).await.unwrap().id().to_owned();

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["one_truth::live_run_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB, &url)
        .env(CHILD_PG_SCHEMA, &schema)
        .env(CHILD_THREAD, &thread_id)
        .env(CHILD_GATE, &gate)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines().map_while(Result::ok);
    assert!(lines.by_ref().any(|line| line.ends_with("TOOL RUNNING")), "the child's tool runs");
    let recovery = runtime.recover().await.unwrap();
    assert!(recovery.settled.is_empty() && recovery.continued.is_empty(), "a live run is left alone: {recovery:?}");

    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    // Well inside the minute the lease would last: the presence lock is what tells.
    let deadline = killed + Duration::from_secs(20);
    loop {
        runtime.recover().await.unwrap();
        if store.load_thread(&thread_id).await.unwrap().unwrap().status == ThreadStatus::Idle {
            break;
        }
        assert!(Instant::now() < deadline, "the dead owner's thread was not taken over within 20 s of its death");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let messages = store.messages(&thread_id).await.unwrap();
    let results: Vec<_> = messages.iter().filter(|m| m.tool_call_id.as_deref() == Some("call_refund")).collect();
    assert_eq!(results.len(), 1, "one result for the call, its interrupted one: {messages:?}");
    assert_eq!(
        messages.last().and_then(|m| m.content.as_deref()),
        Some("The refund may not have gone through."),
        "the turn resumed to a reply"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A second result of one tool call, as a second process's recovery would have written it
/// next to the live run's: refused by the store, whatever writes it.
async fn one_result_per_call(store: Arc<dyn MessageStore>) {
    use hooks_runtime::store::{StoreErrorKind, ThreadRecord};
    use hooks_runtime::types::{HookMessage, Role};
    let record = ThreadRecord::new(format!("o4_{}", std::process::id()), "slow_agent", 1);
    store.create_thread(&record).await.unwrap();
    let result = |id: &str, text: &str| HookMessage::new(id, Role::Tool, text, 0).with_tool_call_id("call_refund");
    store.insert_message(&record.id, &result("m1", "refunded")).await.unwrap();
    let second = store.insert_message(&record.id, &result("m2", "interrupted")).await.unwrap_err();
    assert_eq!(second.kind(), StoreErrorKind::Conflict, "{second}");
    let texts: Vec<_> = store.messages(&record.id).await.unwrap().into_iter().filter_map(|m| m.content).collect();
    assert_eq!(texts, ["refunded"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o4_a_second_result_of_one_tool_call_is_refused_in_memory_and_on_sqlite() {
    one_result_per_call(Arc::new(InMemoryStore::new())).await;
    let dir = scratch("o4");
    one_result_per_call(open_sqlite(&dir.join("threads.db"))).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o4_a_second_result_of_one_tool_call_is_refused_on_postgres() {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let store = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    one_result_per_call(Arc::new(store)).await;
}

// ---------------------------------------------------------------------------------------------
// O6: an approval acknowledged just before a crash is carried out by recovery.

/// Recovers, then waits until the thread's turn has gone on and ended: a step's last decision
/// is left to its decider for a moment after it is made, then the recovery sweep takes it.
async fn recover_until_idle(runtime: &Runtime, thread_id: &str) {
    runtime.recover().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while runtime.store().load_thread(thread_id).await.unwrap().unwrap().status != ThreadStatus::Idle {
        assert!(Instant::now() < deadline, "recovery never resumed the decided step");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o6_an_approval_acknowledged_before_a_crash_runs_once_after_the_restart() {
    let dir = scratch("o6");
    let (db, runs) = (dir.join("threads.db"), dir.join("runs"));
    let thread_id = {
        let crashed = runtime(open_sqlite(&db), ScriptedModel::new([asks_to_pay()]), runs.clone());
        let thread = crashed.create_thread("front_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.send("pay 300").await.unwrap().status, ThreadStatus::AwaitingApproval);
        // The decision is kept (a server's 202), and the process dies before resuming the turn.
        let approve = ApprovalChoice::Approve { arguments: None };
        thread.record_decision("call_pay", approve).await.unwrap();
        thread.id().to_owned()
    };
    let model = ScriptedModel::new([ScriptedResponse::text("Paid.")]);
    let restarted = runtime(open_sqlite(&db), model.clone(), runs.clone());
    recover_until_idle(&restarted, &thread_id).await;
    let thread = restarted.open_thread(&thread_id).await.unwrap();
    assert_eq!(thread.status(), ThreadStatus::Idle);
    assert_eq!(runs_of(&runs), 1, "the approved call ran once");
    assert!(thread.pending_approvals().await.unwrap().is_empty());
    let messages = thread.messages().await.unwrap();
    assert_eq!(messages.last().unwrap().content.as_deref(), Some("Paid."));
    ScriptedModel::check_messages(&model.requests()[0].messages).unwrap();
    let record = thread.approval("call_pay").await.unwrap().unwrap();
    assert_eq!((record.outcome(), record.decided_by.as_deref()), (Some(ApprovalOutcome::Ran), Some("person")));
    assert!(matches!(thread.approve("call_pay").await, Err(ApprovalError::AlreadyDecided { .. })));
    assert!(restarted.recover().await.unwrap().continued.is_empty(), "nothing is left to resume");
    assert_eq!(runs_of(&runs), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------------------
// O7: decisions are a ledger.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o7_a_decision_after_the_step_from_another_process_is_already_decided() {
    let dir = scratch("o7");
    let (db, runs) = (dir.join("threads.db"), dir.join("runs"));
    let model = ScriptedModel::new([asks_to_pay(), ScriptedResponse::text("Paid.")]);
    let first = runtime(open_sqlite(&db), model, runs.clone());
    let thread = first.create_thread("front_agent", ThreadOptions::default()).await.unwrap();
    thread.send("pay 300").await.unwrap();
    assert_eq!(thread.approve("call_pay").await.unwrap().reply.as_deref(), Some("Paid."));

    let other = runtime(open_sqlite(&db), ScriptedModel::new([]), runs.clone());
    let elsewhere = other.open_thread(thread.id()).await.unwrap();
    let late = elsewhere.deny("call_pay", "too late").await.unwrap_err();
    assert!(matches!(late, ApprovalError::AlreadyDecided { state: ApprovalState::Done, .. }), "{late}");
    assert!(late.to_string().contains("already decided"), "{late}");
    let record = elsewhere.approval("call_pay").await.unwrap().expect("the ledger answers in every process");
    assert_eq!(record.decided_by.as_deref(), Some("person"));
    assert_eq!(record.outcome(), Some(ApprovalOutcome::Ran));
    assert!(record.settled);
    let unknown = elsewhere.approve("call_never").await.unwrap_err();
    assert!(matches!(unknown, ApprovalError::UnknownCall { .. }), "{unknown}");
    assert_eq!(runs_of(&runs), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One round of an approval and an abort at once: whichever wins, the ledger, the events and
/// the model's result say the same.
async fn approve_and_abort_at_once(round: usize, runs: &Path) {
    let before = runs_of(runs);
    let model = ScriptedModel::new([asks_to_pay(), ScriptedResponse::text("Paid.")]);
    let runtime = runtime(Arc::new(InMemoryStore::new()), model, runs.to_path_buf());
    let thread = runtime.create_thread("front_agent", ThreadOptions::default()).await.unwrap();
    thread.send("pay 300").await.unwrap();
    let mut events = thread.subscribe();
    let (approving, aborting) = (thread.clone(), thread.clone());
    let (approved, aborted) = tokio::join!(
        tokio::spawn(async move { approving.approve("call_pay").await }),
        tokio::spawn(async move { aborting.abort_approvals().await }),
    );
    aborted.unwrap().unwrap();
    let approved = approved.unwrap();
    let record = thread.approval("call_pay").await.unwrap().unwrap();
    let resolved: Vec<ApprovalDecision> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|event| match event {
            ThreadEvent::ApprovalResolved { decision, .. } => Some(decision),
            _ => None,
        })
        .collect();
    let result = thread
        .messages()
        .await
        .unwrap()
        .into_iter()
        .filter(|m| m.tool_call_id.as_deref() == Some("call_pay"))
        .collect::<Vec<_>>();
    assert_eq!(result.len(), 1, "round {round}: one result");
    let denied_result = result[0].extra.get("tool_denied") == Some(&json!(true));
    match record.decided_by.as_deref() {
        Some("person") => {
            assert!(approved.is_ok(), "round {round}: {approved:?}");
            assert_eq!(resolved, [ApprovalDecision::Approved], "round {round}");
            assert_eq!(record.outcome(), Some(ApprovalOutcome::Ran), "round {round}");
            assert!(!denied_result, "round {round}: the model reads the tool's result");
            assert_eq!(runs_of(runs), before + 1, "round {round}");
        }
        Some("abort") => {
            assert!(matches!(approved, Err(ApprovalError::AlreadyDecided { .. })), "round {round}: {approved:?}");
            assert_eq!(resolved, [ApprovalDecision::Denied], "round {round}");
            assert_eq!(record.outcome(), Some(ApprovalOutcome::Denied), "round {round}");
            assert!(denied_result, "round {round}: the model reads the denial");
            assert_eq!(runs_of(runs), before, "round {round}");
        }
        other => panic!("round {round}: decided by {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o7_an_approval_and_an_abort_at_once_end_with_one_outcome_in_20_rounds() {
    let dir = scratch("o7-race");
    let runs = dir.join("runs");
    for round in 0..20 {
        approve_and_abort_at_once(round, &runs).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
