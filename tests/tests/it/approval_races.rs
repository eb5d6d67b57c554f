//! O7: an approval and an abort sent at the same moment end with one outcome, told alike by the
//! store (messages, status, parked rows and the ledger), the events a subscriber got and the
//! `RunOutcome`s the two callers were given. Each round parks a call, then releases an approval
//! and an abort together from two tasks (a barrier, and a varying number of `yield_now`s on
//! either side, so that each side wins in some rounds), and reads every account of what
//! happened.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks_runtime::approvals::{ApprovalDecision, ApprovalError, ApprovalOutcome, ApprovalState};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{InMemoryStore, MessageStore, SqliteStore, StopReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{RunOutcome, Runtime, RuntimeError, ThreadEvent, ThreadOptions};
use tokio::sync::Barrier;

define_prompt! { name: race_prompt, model: "m", prompt: "Pay.", tools: ["pay"] }
define_agent! { name: race_agent, side_a: { prompt: race_prompt, stop_on_response: true } }

const CALL: &str = "call_pay";

/// How the abort is sent.
#[derive(Debug, Clone, Copy)]
enum Abort {
    /// `Thread::abort_approvals`, which returns the outcome of the run it finished.
    Approvals,
    /// `Thread::abort`, which returns at once and finishes a waiting step in a task.
    Signal,
}

/// One round's thread, parked on a payment that waits for a person.
struct Round {
    runtime: Runtime,
    store: Arc<dyn MessageStore>,
    thread: hooks_runtime::Thread,
    ran: Arc<AtomicUsize>,
    model: ScriptedModel,
}

/// Where a round's thread is stored: in memory, or in an SQLite file (whose writes yield to the
/// runtime, which widens the windows between a write and what follows it).
#[derive(Debug, Clone, Copy)]
enum Store {
    Memory,
    Sqlite,
}

async fn parked_round(kind: Store, n: usize) -> Round {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let pay = FnTool::new("pay", "Pays.", move |_arguments| {
        let counter = counter.clone();
        async move {
            counter.fetch_add(1, Ordering::SeqCst);
            // As a tool that waits on I/O: the payment is made, its answer comes later.
            tokio::task::yield_now().await;
            HookToolResult::success("paid")
        }
    })
    .with_approval(|_| ToolDecision::ask("payments need a person"));
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call(CALL, "pay", r#"{"amount":300}"#),
        ScriptedResponse::text("Paid."),
    ]);
    let store: Arc<dyn MessageStore> = match kind {
        Store::Memory => Arc::new(InMemoryStore::new()),
        Store::Sqlite => {
            let dir = std::env::temp_dir().join(format!("approval-races-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(format!("round-{n}.db"));
            let _ = std::fs::remove_file(&path);
            Arc::new(SqliteStore::open(&path).unwrap())
        }
    };
    let runtime = Runtime::builder()
        .agent::<race_agent>()
        .model("m", model.clone())
        .tool(pay)
        .store(store.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread("race_agent", ThreadOptions::default()).await.unwrap();
    let parked = thread.send("pay 300").await.unwrap();
    assert_eq!(parked.status, ThreadStatus::AwaitingApproval);
    Round { runtime, store, thread, ran, model }
}

async fn yields(times: usize) {
    for _ in 0..times {
        tokio::task::yield_now().await;
    }
}

/// Whether a status ends a run (nothing runs, nothing waits).
fn settled(status: &ThreadStatus) -> bool {
    !matches!(status, ThreadStatus::Running | ThreadStatus::AwaitingApproval)
}

/// One round: approve and abort at once, then check that every account tells the same story.
async fn round(n: usize, kind: Store, abort: Abort) -> String {
    let Round { runtime, store, thread, ran, model } = parked_round(kind, n).await;
    let mut events = thread.subscribe_unbounded();
    let barrier = Arc::new(Barrier::new(2));
    let (approving, aborting) = (thread.clone(), thread.clone());
    let (approve_yields, abort_yields) = (n % 3, (n / 3) % 3);
    let (approver_barrier, aborter_barrier) = (barrier.clone(), barrier);
    let (approved, aborted) = tokio::join!(
        tokio::spawn(async move {
            approver_barrier.wait().await;
            yields(approve_yields).await;
            approving.approve(CALL).await
        }),
        tokio::spawn(async move {
            aborter_barrier.wait().await;
            yields(abort_yields).await;
            match abort {
                Abort::Approvals => Some(aborting.abort_approvals().await),
                Abort::Signal => {
                    aborting.abort();
                    None
                }
            }
        }),
    );
    let approved: Result<RunOutcome, ApprovalError> = approved.unwrap();
    let aborted: Option<Result<RunOutcome, RuntimeError>> = aborted.unwrap();
    let at = format!("round {n} ({kind:?}, {abort:?})");

    // The events up to the status that settled the step (`Thread::abort` finishes a waiting
    // step in a task of its own, which may still be going when the callers have returned).
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(10), events.recv())
            .await
            .unwrap_or_else(|_| panic!("{at}: no status settled the step; events so far: {seen:?}"))
            .expect("the thread lives");
        let last = matches!(&event, ThreadEvent::Status { status } if settled(status));
        seen.push(event);
        if last {
            break;
        }
    }
    let final_status = match seen.last() {
        Some(ThreadEvent::Status { status }) => status.clone(),
        other => panic!("{at}: {other:?}"),
    };

    // The store's account.
    let record = thread.approval(CALL).await.unwrap().expect("the ledger keeps the call");
    let stored_status = store.load_thread(thread.id()).await.unwrap().unwrap().status;
    let parked = store.approvals().unwrap().parked_tool_calls(thread.id()).await.unwrap();
    let messages = thread.messages().await.unwrap();
    let results: Vec<_> = messages.iter().filter(|m| m.tool_call_id.as_deref() == Some(CALL)).collect();
    let replied = messages.iter().any(|m| m.role == Role::Assistant && m.content.as_deref() == Some("Paid."));
    assert!(parked.is_empty(), "{at}: the step is settled, nothing stays parked: {parked:?}");
    assert_eq!(record.state, ApprovalState::Done, "{at}: {record:?}");
    assert_eq!(results.len(), 1, "{at}: one stored result for the call: {messages:?}");
    let result = results[0];
    let result_denied = result.extra.get("tool_denied") == Some(&serde_json::json!(true));
    assert_eq!(stored_status, final_status, "{at}: the store's status and the last status event");
    assert_eq!(thread.status(), final_status, "{at}: the live status and the last status event");

    // The events' account.
    let resolved: Vec<ApprovalDecision> = seen
        .iter()
        .filter_map(|event| match event {
            ThreadEvent::ApprovalResolved { id, decision } if id == CALL => Some(*decision),
            _ => None,
        })
        .collect();
    let done: Vec<(bool, bool)> = seen
        .iter()
        .filter_map(|event| match event {
            ThreadEvent::ToolCallDone { id, status, denied, .. } if id == CALL => {
                Some((status.as_str() == "success", *denied))
            }
            _ => None,
        })
        .collect();
    let position = |wanted: fn(&ThreadEvent) -> bool| seen.iter().position(wanted);
    let resolved_at = position(|event| matches!(event, ThreadEvent::ApprovalResolved { .. }));
    let done_at = position(|event| matches!(event, ThreadEvent::ToolCallDone { .. }));
    assert!(resolved_at < done_at, "{at}: the decision is told before what follows from it: {seen:?}");

    // The outcomes' account: each caller that got an outcome was told the final status.
    if let Ok(outcome) = &approved {
        assert_eq!(outcome.status, final_status, "{at}: the approver's outcome");
    }
    if let Some(outcome) = &aborted {
        let outcome = outcome.as_ref().unwrap_or_else(|error| panic!("{at}: abort_approvals failed: {error}"));
        assert_eq!(outcome.status, final_status, "{at}: the aborter's outcome");
    }

    match record.decided_by.as_deref() {
        // The approval came first: the tool ran once and its result is what the model reads.
        Some("person") => {
            assert_eq!(ran.load(Ordering::SeqCst), 1, "{at}: the approved tool ran once");
            assert_eq!(record.outcome(), Some(ApprovalOutcome::Ran), "{at}");
            assert!(!result_denied, "{at}: {result:?}");
            assert_eq!(result.content.as_deref(), Some("paid"), "{at}: the tool's own result is stored");
            assert_eq!(resolved, [ApprovalDecision::Approved], "{at}: {seen:?}");
            assert_eq!(done, [(true, false)], "{at}: tool_call_done tells the tool's result");
            let outcome = approved.as_ref().unwrap_or_else(|error| panic!("{at}: the approval won, yet: {error}"));
            // The turn went on to the model's reply, or the abort stopped it: before the model
            // was asked, while it answered (the reply is dropped, never stored), or once the
            // reply was stored. The status, the history and the outcome agree on which.
            assert_eq!(outcome.reply.is_some(), replied, "{at}: the outcome's reply and the history: {outcome:?}");
            match &final_status {
                ThreadStatus::Idle => {
                    assert!(replied, "{at}: an idle thread has the reply stored");
                    assert_eq!(model.requests().len(), 2, "{at}");
                }
                ThreadStatus::Stopped(StopReason::Aborted) => {}
                other => panic!("{at}: the approved call ran, then the thread became {other}"),
            }
        }
        // The abort came first: the tool never ran, and everything says it was denied.
        Some("abort") => {
            assert_eq!(ran.load(Ordering::SeqCst), 0, "{at}: a call the abort denied never runs");
            assert_eq!(record.outcome(), Some(ApprovalOutcome::Denied), "{at}");
            assert!(result_denied, "{at}: the model reads the denial: {result:?}");
            assert_eq!(resolved, [ApprovalDecision::Denied], "{at}: {seen:?}");
            assert_eq!(done, [(false, true)], "{at}: tool_call_done tells the denial");
            assert!(
                matches!(approved, Err(ApprovalError::AlreadyDecided { .. })),
                "{at}: the approval came second: {approved:?}"
            );
            assert_eq!(final_status, ThreadStatus::Stopped(StopReason::Aborted), "{at}");
            assert!(!replied, "{at}");
            assert_eq!(model.requests().len(), 1, "{at}: the model is not asked after the denial");
        }
        other => panic!("{at}: decided by {other:?}"),
    }
    drop(runtime);
    format!("{kind:?} {abort:?}: decided by {}, {final_status}", record.decided_by.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn o7_an_approval_and_an_abort_at_once_tell_one_story_in_320_rounds() {
    // How the rounds ended, shown with `--nocapture`.
    let mut endings = std::collections::BTreeMap::<String, usize>::new();
    for n in 0..160 {
        let kind = if n % 2 == 0 { Store::Memory } else { Store::Sqlite };
        *endings.entry(round(n, kind, Abort::Approvals).await).or_default() += 1;
        *endings.entry(round(n, kind, Abort::Signal).await).or_default() += 1;
    }
    eprintln!("{endings:#?}");
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("approval-races-{}", std::process::id())));
}
