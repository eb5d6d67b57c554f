//! Approvals in the durable stores (A2, A4): waiting calls survive a restart on SQLite, a call
//! that was running when its process was killed is recorded as interrupted and never runs
//! again, and on PostgreSQL two runtimes deciding the same call at once: one wins, the tool runs
//! once.
//!
//! The killed process is this test binary itself, running the ignored test `approval_child`,
//! told what to do by environment variables.

#[cfg(feature = "postgres")]
use crate::support_store;

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::approvals::{ApprovalError, ApprovalOutcome};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::Value;

define_prompt! { name: a2_prompt, model: "scripted", prompt: "Pay.", tools: ["a2_pay"] }
define_agent! { name: a2_agent, side_a: { prompt: a2_prompt, stop_on_response: true } }

/// The file the child's tool appends to, and the thread it approves.
const CHILD_DB: &str = "HOOKS_APPROVAL_CHILD_DB";
const CHILD_THREAD: &str = "HOOKS_APPROVAL_CHILD_THREAD";
const CHILD_RUNS: &str = "HOOKS_APPROVAL_CHILD_RUNS";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("governing-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A payment tool that always waits for approval and appends a line to `runs` each time it runs.
fn pay_tool(runs: PathBuf, then: Duration) -> FnTool {
    FnTool::new("a2_pay", "Pays.", move |_arguments: Value| {
        let runs = runs.clone();
        async move {
            let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&runs).unwrap();
            writeln!(file, "ran").unwrap();
            println!("TOOL RUNNING");
            tokio::time::sleep(then).await;
            HookToolResult::success("paid")
        }
    })
    .with_approval(|_| ToolDecision::ask("payments need a person"))
}

fn runs_of(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |text| text.lines().count())
}

fn runtime(store: Arc<dyn MessageStore>, model: ScriptedModel, runs: PathBuf, then: Duration) -> Runtime {
    Runtime::builder()
        .agent::<a2_agent>()
        .model("scripted", model)
        .tool(pay_tool(runs, then))
        .store(store)
        .build()
        .unwrap()
}

fn asks() -> ScriptedModel {
    ScriptedModel::new([ScriptedResponse::tool_call("call_pay", "a2_pay", r#"{"amount":300}"#)])
}

#[tokio::test]
async fn a2_waiting_calls_survive_a_restart_on_sqlite_and_another_runtime_decides() {
    let dir = scratch("restart");
    let (db, runs) = (dir.join("threads.db"), dir.join("runs"));
    let thread_id = {
        let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
        let first = runtime(store, asks(), runs.clone(), Duration::ZERO);
        let thread = first.create_thread("a2_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
        thread.id().to_owned()
    };
    let model = ScriptedModel::new([ScriptedResponse::text("Paid.")]);
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let second = runtime(store, model.clone(), runs.clone(), Duration::ZERO);
    let thread = second.open_thread(&thread_id).await.unwrap();
    assert_eq!(thread.status(), ThreadStatus::AwaitingApproval);
    let pending = thread.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].id.as_str(), pending[0].arguments["amount"].as_i64()), ("call_pay", Some(300)));
    let outcome = thread.approve("call_pay").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(outcome.reply.as_deref(), Some("Paid."));
    assert_eq!(runs_of(&runs), 1);
    for request in model.requests() {
        ScriptedModel::check_messages(&request.messages).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child: approves the waiting call; the tool announces `TOOL RUNNING` and then takes long
/// enough to be killed while it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "the child process of the kill test, which runs it"]
async fn approval_child() {
    let (Ok(db), Ok(thread_id), Ok(runs)) =
        (std::env::var(CHILD_DB), std::env::var(CHILD_THREAD), std::env::var(CHILD_RUNS))
    else {
        return;
    };
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let runtime = runtime(store, ScriptedModel::new([]), PathBuf::from(runs), Duration::from_secs(600));
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let _ = thread.approve("call_pay").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a4_a_call_running_when_its_process_is_killed_is_interrupted_and_never_runs_again() {
    let dir = scratch("sigkill");
    let (db, runs) = (dir.join("threads.db"), dir.join("runs"));
    let thread_id = {
        let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
        let first = runtime(store, asks(), runs.clone(), Duration::ZERO);
        let thread = first.create_thread("a2_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
        thread.id().to_owned()
    };
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["governing_stores::approval_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB, &db)
        .env(CHILD_THREAD, &thread_id)
        .env(CHILD_RUNS, &runs)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // libtest prints the test's name on the line the child's output starts on.
    let running = BufReader::new(stdout).lines().map_while(Result::ok).any(|line| line.ends_with("TOOL RUNNING"));
    assert!(running, "the child ran the approved tool");
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert_eq!(runs_of(&runs), 1);

    let model = ScriptedModel::new([ScriptedResponse::text("Noted."), ScriptedResponse::text("Nothing more.")]);
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let recovered = runtime(store.clone(), model.clone(), runs.clone(), Duration::ZERO);
    let mut recovery = recovered.recover().await.unwrap();
    assert_eq!(recovery.settled, std::slice::from_ref(&thread_id));
    // The turn goes on by itself (O8): the model is asked again and replies.
    assert_eq!(recovery.continued, std::slice::from_ref(&thread_id));
    recovery.wait_for_inboxes().await;
    let thread = recovered.open_thread(&thread_id).await.unwrap();
    assert_eq!(thread.status(), ThreadStatus::Idle);
    assert_eq!(thread.messages().await.unwrap().last().unwrap().content.as_deref(), Some("Noted."));
    assert!(thread.pending_approvals().await.unwrap().is_empty());
    assert!(store.approvals().unwrap().parked_tool_calls(&thread_id).await.unwrap().is_empty());
    let messages = thread.messages().await.unwrap();
    let results: Vec<&HookMessage> =
        messages.iter().filter(|m| m.tool_call_id.as_deref() == Some("call_pay")).collect();
    assert_eq!(results.len(), 1, "one result for the call");
    assert!(results[0].content.as_deref().unwrap().contains("interrupted"), "{:?}", results[0].content);
    assert_eq!(results[0].extra["tool_interrupted"], true, "G12: marked interrupted, apart from failures");
    let again = thread.approve("call_pay").await.unwrap_err();
    assert!(matches!(again, ApprovalError::AlreadyDecided { .. }), "{again}");
    let record = thread.approval("call_pay").await.unwrap().expect("the ledger keeps the decided call");
    assert_eq!(record.outcome(), Some(ApprovalOutcome::Interrupted));
    assert_eq!(record.decided_by.as_deref(), Some("person"));
    // The thread goes on; the history the model sees is valid; the tool never ran again.
    assert_eq!(thread.send("and now?").await.unwrap().status, ThreadStatus::Idle);
    ScriptedModel::check_messages(&model.requests()[0].messages).unwrap();
    assert_eq!(runs_of(&runs), 1, "the interrupted call was not run again");
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a4_postgres_two_runtimes_deciding_one_call_at_once_one_wins_and_the_tool_runs_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let connect = || async {
        let store = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
            .await
            .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
        Arc::new(store) as Arc<dyn MessageStore>
    };
    let dir = scratch("postgres");
    let runs = dir.join("runs");
    let first = runtime(connect().await, asks(), runs.clone(), Duration::ZERO);
    let thread = first.create_thread("a2_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
    static DONE: AtomicUsize = AtomicUsize::new(0);
    let a =
        runtime(connect().await, ScriptedModel::new([ScriptedResponse::text("Paid.")]), runs.clone(), Duration::ZERO);
    let b =
        runtime(connect().await, ScriptedModel::new([ScriptedResponse::text("Paid.")]), runs.clone(), Duration::ZERO);
    let on_a = a.open_thread(thread.id()).await.unwrap();
    let on_b = b.open_thread(thread.id()).await.unwrap();
    assert_eq!(on_b.pending_approvals().await.unwrap().len(), 1, "visible from every process on the store (A2)");
    let (left, right) = tokio::join!(on_a.approve("call_pay"), on_b.approve("call_pay"));
    for outcome in [&left, &right] {
        if outcome.is_ok() {
            DONE.fetch_add(1, Ordering::SeqCst);
        }
    }
    assert_eq!(DONE.load(Ordering::SeqCst), 1, "{left:?} / {right:?}");
    assert_eq!(runs_of(&runs), 1, "the tool ran once");
    let messages = on_a.messages().await.unwrap();
    assert_eq!(messages.iter().filter(|m| m.tool_call_id.as_deref() == Some("call_pay")).count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A7 on one store, from two runtimes: the call listed by the first carries the SHA-256 of its
/// arguments' canonical JSON, the same when the second reads it back; a decision naming the
/// hash of other arguments is refused as stale and changes nothing; the listed one runs the
/// tool once.
async fn a7_decisions_are_bound_to_the_listed_hash(
    name: &str,
    first: Arc<dyn MessageStore>,
    second: Arc<dyn MessageStore>,
) {
    use hooks_runtime::approvals::{ApprovalChoice, ApprovalState, ParkedToolCall};

    let dir = scratch(&format!("a7-{name}"));
    let runs = dir.join("runs");
    // Keys out of order: the hash is over the canonical form, whatever order the store keeps.
    let model = ScriptedModel::new([ScriptedResponse::tool_call("call_pay", "a2_pay", r#"{"to":"bob","amount":300}"#)]);
    let one = runtime(first, model, runs.clone(), Duration::ZERO);
    let thread = one.create_thread("a2_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let listed = thread.pending_approvals().await.unwrap().remove(0);
    // `printf '{"amount":300,"to":"bob"}' | sha256sum`
    assert_eq!(listed.arguments_sha256(), "b96666892ca2fba5dedb73fa637c9ac514eaf9cedcac06090d7fe0ba6a16374f");

    let two = runtime(second, ScriptedModel::new([ScriptedResponse::text("Paid.")]), runs.clone(), Duration::ZERO);
    let there = two.open_thread(thread.id()).await.unwrap();
    assert_eq!(there.pending_approvals().await.unwrap()[0].arguments_sha256(), listed.arguments_sha256());
    let shown = ParkedToolCall::new(
        "call_pay",
        "a2_pay",
        serde_json::json!({"to": "bob", "amount": 3000}),
        0,
        ApprovalState::Pending,
    );
    let approve = || ApprovalChoice::Approve { arguments: None };
    let stale = there.decide_listed(&shown, approve()).await.unwrap_err();
    assert!(
        matches!(&stale, ApprovalError::Stale { current, .. } if *current == listed.arguments_sha256()),
        "{stale:?}"
    );
    let refused = there.record_bound_decision("call_pay", &shown.arguments_sha256(), approve()).await;
    assert!(matches!(refused, Err(ApprovalError::Stale { .. })), "{refused:?}");
    let waiting = there.pending_approvals().await.unwrap();
    assert_eq!((waiting.len(), waiting[0].state), (1, ApprovalState::Pending), "nothing was decided");
    assert_eq!(runs_of(&runs), 0, "nothing ran");

    let outcome = there.decide_bound("call_pay", &listed.arguments_sha256(), approve()).await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Paid."), "{outcome}");
    assert_eq!(runs_of(&runs), 1, "the tool ran once");
    let again = there.decide_listed(&listed, approve()).await;
    assert!(matches!(again, Err(ApprovalError::AlreadyDecided { .. })), "{again:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a7_sqlite_a_decision_names_the_listed_arguments_hash_and_a_stale_one_changes_nothing() {
    let dir = scratch("a7-sqlite-file");
    let db = dir.join("threads.db");
    let open = || Arc::new(SqliteStore::open(&db).unwrap()) as Arc<dyn MessageStore>;
    a7_decisions_are_bound_to_the_listed_hash("sqlite", open(), open()).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a7_postgres_a_decision_names_the_listed_arguments_hash_and_a_stale_one_changes_nothing() {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = support_store::fresh_postgres_schema().await;
    let connect = || async {
        let store = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
            .await
            .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
        Arc::new(store) as Arc<dyn MessageStore>
    };
    a7_decisions_are_bound_to_the_listed_hash("postgres", connect().await, connect().await).await;
}

/// A guard that lets every call through: a policy that differs only by its presence.
#[hook(before_tool_call, id = "a7_watch_guard", on_failure = deny)]
fn a7_watch_guard(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::allow()
}

/// A7: a waiting call carries the fingerprint of the policy it parked under, kept with it on
/// SQLite: the same for two runtimes built alike, another once a guard is added, and read back
/// as it was stored by a runtime whose policy differs.
#[tokio::test]
async fn a7_sqlite_a_waiting_call_carries_the_fingerprint_of_the_policy_it_parked_under() {
    let dir = scratch("a7-fingerprint");
    let (db, runs) = (dir.join("threads.db"), dir.join("runs"));
    let open = || Arc::new(SqliteStore::open(&db).unwrap()) as Arc<dyn MessageStore>;
    let park = |runtime: Runtime| async move {
        let thread = runtime.create_thread("a2_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
        let listed = thread.pending_approvals().await.unwrap().remove(0);
        (thread.id().to_owned(), listed.policy_fingerprint().expect("a waiting call's fingerprint").to_owned())
    };
    let (first_thread, plain) = park(runtime(open(), asks(), runs.clone(), Duration::ZERO)).await;
    let (_, again) = park(runtime(open(), asks(), runs.clone(), Duration::ZERO)).await;
    assert_eq!(plain, again, "the same policy, the same fingerprint");
    assert_eq!(plain.len(), 64, "{plain}");
    let guarded = || {
        Runtime::builder()
            .agent::<a2_agent>()
            .model("scripted", asks())
            .tool(pay_tool(runs.clone(), Duration::ZERO))
            .guard::<a7_watch_guard>()
            .store(open())
            .build()
            .unwrap()
    };
    let (_, with_guard) = park(guarded()).await;
    assert_ne!(plain, with_guard, "a guard added is another policy");
    let other = guarded();
    let first = other.open_thread(&first_thread).await.unwrap().pending_approvals().await.unwrap().remove(0);
    assert_eq!(first.policy_fingerprint(), Some(plain.as_str()), "kept as it parked");
    assert_eq!(runs_of(&runs), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A guard that denies every payment: the policy a rebuilt runtime adds.
#[hook(before_tool_call, id = "a8_no_payments", on_failure = deny)]
fn a8_no_payments(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::deny("payments are suspended")
}

/// A8: a call parked under one policy and approved by a runtime rebuilt on the same SQLite file
/// with a guard that denies it is governed again first: the guard's deny denies it, the reason
/// says the policy changed, and the tool never runs.
#[tokio::test]
async fn a8_sqlite_a_call_approved_after_the_policy_changed_is_governed_again_and_a_deny_denies_it() {
    use hooks_runtime::approvals::ApprovalChoice;

    let dir = scratch("a8-regoverned");
    let (db, runs) = (dir.join("threads.db"), dir.join("runs"));
    let open = || Arc::new(SqliteStore::open(&db).unwrap()) as Arc<dyn MessageStore>;
    let first = runtime(open(), asks(), runs.clone(), Duration::ZERO);
    let thread = first.create_thread("a2_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let listed = thread.pending_approvals().await.unwrap().remove(0);
    let thread_id = thread.id().to_owned();
    drop(thread);
    drop(first);

    let rebuilt = Runtime::builder()
        .agent::<a2_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Not paid.")]))
        .tool(pay_tool(runs.clone(), Duration::ZERO))
        .guard::<a8_no_payments>()
        .store(open())
        .build()
        .unwrap();
    let thread = rebuilt.open_thread(&thread_id).await.unwrap();
    let refused = thread.decide_listed(&listed, ApprovalChoice::Approve { arguments: None }).await.unwrap_err();
    let ApprovalError::PolicyDenied { hook, reason, .. } = &refused else { panic!("{refused:?}") };
    assert_eq!((hook.as_str(), reason.as_str()), ("a8_no_payments", "payments are suspended"));
    assert_eq!(runs_of(&runs), 0, "the tool never ran");
    let record = thread.approval(&listed.id).await.unwrap().expect("the ledger keeps it");
    assert_eq!(record.outcome(), Some(ApprovalOutcome::Denied), "{record:?}");
    let messages = thread.messages().await.unwrap();
    let result = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_pay")).expect("the denial");
    let content = result.content.as_deref().unwrap_or_default();
    assert!(content.contains("the policy changed while the call waited"), "{content}");
    assert!(content.contains("`a8_no_payments` denied it: payments are suspended"), "{content}");
    let _ = std::fs::remove_dir_all(&dir);
}
