//! Recovery: settling the runs that a stopped process left unsettled, continuing their turns,
//! and running the inputs it had accepted.
//!
//! When: once at a runtime's first use (its first `create_thread` or `open_thread`), and
//! whenever [`Runtime::recover`](crate::Runtime::recover) is called; on a store that several
//! processes share ([`RunOwnership::recovery_sweep_interval`](crate::store::RunOwnership::recovery_sweep_interval)),
//! also every sweep interval, by a task that lives as long as the runtime.
//!
//! What, per thread the store names ([`MessageStore::unsettled_threads`](crate::store::MessageStore::unsettled_threads)),
//! under the thread's run lock and the store's hold on it, as a run would be, in a task of its
//! own (the recovery waits only for the settling):
//! - a thread still `running` (its owner died mid-turn) is settled: a parked step's call that
//!   was running is interrupted and never runs again, an approved call that never started runs
//!   (O6); every stored tool call without a result gets an error result saying the run was
//!   interrupted, so the history is provider-valid. A reply that was streaming was never stored
//!   (only complete messages are), so nothing partial is left to mark. Then, under
//!   [`RecoveryPolicy::Resume`](crate::RecoveryPolicy::Resume) (the default), the turn goes on: the model is asked again and
//!   the thread ends its turn with a reply (O8); under [`RecoveryPolicy::Settle`](crate::RecoveryPolicy::Settle) it becomes
//!   `failed (owner_lost)`;
//! - a thread `awaiting_approval` whose calls are all decided, whose decider died before
//!   resuming the turn, resumes it (O6);
//! - then every input still in its inbox runs, one run each, in acceptance order.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, Weak};

use hooks_core::{HookToolCall, Role, ThreadState};
use tokio::sync::oneshot;

use super::live_threads::LiveThreads;
use super::messages;
use super::pipeline::Pipeline;
use super::resuming::ParkedStep;
use super::{InputId, RunOutcome, RuntimeError, Thread, ThreadShared, TurnEnd, reentry, run_permit};
use crate::dispatch::FailureRule;
use crate::events::ThreadStatus;
use crate::reasons::FailReason;
pub use crate::shared::recovery_state::RecoveryPolicy;
use crate::shared::runtime_inner::RuntimeInner;

/// What a recovery did.
///
/// ```no_run
/// # async fn run(runtime: hooks_runtime::Runtime) -> Result<(), hooks_runtime::RuntimeError> {
/// let mut recovery = runtime.recover().await?;
/// println!("settled {:?}; running the inboxes of {:?}", recovery.settled, recovery.resumed);
/// recovery.wait_for_inboxes().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Recovery {
    /// Threads that were left `running` and are now `failed (owner_lost)`.
    pub settled: Vec<String>,
    /// Threads whose inbox had inputs, which now run in the background.
    pub resumed: Vec<String>,
    /// Threads whose turn goes on in the background: a turn interrupted by its process's death
    /// ([`RecoveryPolicy::Resume`](crate::RecoveryPolicy::Resume), O8), or a step whose calls were all decided but whose turn
    /// never resumed (O6).
    pub continued: Vec<String>,
    /// Threads that could not be recovered, with the error (logged too); the next recovery
    /// tries them again.
    pub failed: Vec<(String, String)>,
    runs: Vec<tokio::task::JoinHandle<()>>,
}

impl Recovery {
    /// Waits until the turns this recovery continues and the inbox runs it started have ended.
    pub async fn wait_for_inboxes(&mut self) {
        for run in self.runs.drain(..) {
            let _ = run.await;
        }
    }
}

/// The first use's recovery, once per runtime; later calls return at once. A failure is
/// logged: the thread stays as it was until the next recovery.
pub(crate) async fn on_first_use(runtime: &Arc<RuntimeInner>, live: &Arc<LiveThreads<ThreadShared>>) {
    runtime
        .recovery
        .first_use
        .get_or_init(|| async {
            match recover(runtime, live).await {
                Ok(recovery) => log(&recovery),
                Err(error) => {
                    tracing::error!(target: "hooks_runtime::recovery", "could not look for unsettled threads: {error}")
                }
            }
            start_sweeping(runtime, live);
        })
        .await;
}

/// Starts, once per runtime, the sweeper of a store that several processes share.
pub(crate) fn start_sweeping(runtime: &Arc<RuntimeInner>, live: &Arc<LiveThreads<ThreadShared>>) {
    let Some(interval) = runtime.store.run_ownership().map(|owners| owners.recovery_sweep_interval()) else { return };
    if !runtime.recovery.sweeping.swap(true, std::sync::atomic::Ordering::AcqRel) {
        start_sweeper(Arc::downgrade(runtime), Arc::downgrade(live), interval);
    }
}

fn log(recovery: &Recovery) {
    if !recovery.settled.is_empty() || !recovery.resumed.is_empty() || !recovery.continued.is_empty() {
        tracing::warn!(
            target: "hooks_runtime::recovery",
            settled = ?recovery.settled,
            continued = ?recovery.continued,
            resumed = ?recovery.resumed,
            "recovered threads that a stopped process left unsettled"
        );
    }
}

/// Every interval, while the runtime lives: the recovery of threads whose owner died since.
fn start_sweeper(runtime: Weak<RuntimeInner>, live: Weak<LiveThreads<ThreadShared>>, interval: std::time::Duration) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
    handle.spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            let (Some(runtime), Some(live)) = (runtime.upgrade(), live.upgrade()) else { return };
            match recover(&runtime, &live).await {
                Ok(recovery) => log(&recovery),
                Err(error) => tracing::warn!(target: "hooks_runtime::recovery", "the recovery sweep failed: {error}"),
            }
        }
    });
}

/// One recovery of every thread the store names as unsettled.
pub(crate) async fn recover(
    runtime: &Arc<RuntimeInner>,
    live: &Arc<LiveThreads<ThreadShared>>,
) -> Result<Recovery, RuntimeError> {
    let mut recovery = Recovery::default();
    for thread_id in runtime.store.unsettled_threads().await? {
        if Thread::live(live, &thread_id).is_some_and(|thread| thread.shared.journal.runs_here()) {
            continue;
        }
        if !runtime.recovery.busy.lock().unwrap_or_else(PoisonError::into_inner).insert(thread_id.clone()) {
            continue;
        }
        let thread = match Thread::open(runtime, live, &thread_id).await {
            Ok(thread) => thread,
            Err(error) => {
                failed(runtime, &mut recovery, &thread_id, error.to_string());
                continue;
            }
        };
        let (settled_tx, settled) = oneshot::channel();
        let task = tokio::spawn(recover_thread(runtime.clone(), thread, settled_tx));
        match settled.await {
            Ok(Ok(report)) => {
                if report.settled {
                    recovery.settled.push(thread_id.clone());
                }
                if report.continues {
                    recovery.continued.push(thread_id.clone());
                }
                if report.inputs {
                    recovery.resumed.push(thread_id.clone());
                }
                recovery.runs.push(task);
            }
            Ok(Err(error)) => failed(runtime, &mut recovery, &thread_id, error.to_string()),
            Err(_) => {
                failed(runtime, &mut recovery, &thread_id, "the recovery task stopped before settling".to_owned())
            }
        }
    }
    Ok(recovery)
}

fn failed(runtime: &RuntimeInner, recovery: &mut Recovery, thread_id: &str, error: String) {
    tracing::error!(target: "hooks_runtime::recovery", thread = %thread_id, "could not recover the thread: {error}");
    recovery.failed.push((thread_id.to_owned(), error));
    done(runtime, thread_id);
}

fn done(runtime: &RuntimeInner, thread_id: &str) {
    runtime.recovery.busy.lock().unwrap_or_else(PoisonError::into_inner).remove(thread_id);
}

/// What settling one thread found, sent as soon as it is settled.
struct Report {
    /// It was left running or waiting with nothing to decide.
    settled: bool,
    /// Its turn goes on.
    continues: bool,
    /// Its inbox has inputs, which run next.
    inputs: bool,
}

/// How a thread goes on once settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settlement {
    /// Nothing was left unsettled.
    Nothing,
    /// Settled; nothing more to run (calls still wait, or the settle policy stopped the turn).
    Settled,
    /// Settled; the interrupted turn goes on (O8).
    ContinueTurn,
    /// Every call of the parked step is decided and the turn never resumed (O6).
    FinishParkedStep,
}

/// The recovery of one thread, in a task of its own: settled under the thread's run lock and
/// the store's hold (the report sent then), its turn continued under the same hold, then its
/// inbox run.
async fn recover_thread(
    runtime: Arc<RuntimeInner>,
    thread: Thread,
    report: oneshot::Sender<Result<Report, RuntimeError>>,
) {
    let shared = thread.shared.clone();
    let before = thread.status();
    let policy = runtime.recovery.policy;
    let mut report = Some(report);
    let recovered = reentry::holding_run(&shared, async {
        let mut state = shared.lock_run().await;
        let permit = shared.journal.hold_run().await?;
        run_permit::holding(&shared, permit, || async {
            let settlement = settle(&shared, &state, before, policy).await?;
            let inputs = !shared.journal.pending_inputs().await?.is_empty();
            let continues = matches!(settlement, Settlement::ContinueTurn | Settlement::FinishParkedStep);
            let settled = settlement != Settlement::Nothing;
            if let Some(report) = report.take() {
                let _ = report.send(Ok(Report { settled, continues, inputs }));
            }
            continue_turn(&shared, &mut state, settlement).await;
            Ok::<_, RuntimeError>(())
        })
        .await
    })
    .await;
    if let Err(error) = recovered {
        match report.take() {
            // The recovery reports it and forgets the thread.
            Some(report) => {
                let _ = report.send(Err(error));
                return;
            }
            None => {
                tracing::error!(target: "hooks_runtime::recovery", thread = %shared.id, "the recovered thread's turn could not go on: {error}")
            }
        }
    }
    run_inbox(&thread).await;
    done(&runtime, &shared.id);
}

/// Under the thread's hold: what was left unsettled is settled, and how the thread goes on is
/// returned. On a shared store, taking the hold of a dead owner has already marked it
/// `failed (owner_lost)`; it is settled all the same (history, event), since nobody else did.
async fn settle(
    shared: &Arc<ThreadShared>,
    state: &ThreadState,
    before: ThreadStatus,
    policy: RecoveryPolicy,
) -> Result<Settlement, RuntimeError> {
    let now = shared
        .runtime
        .store
        .load_thread(&shared.id)
        .await?
        .ok_or_else(|| RuntimeError::UnknownThread(shared.id.clone()))?
        .status;
    let owner_lost = ThreadStatus::Failed(FailReason::OwnerLost);
    let left_running = now == ThreadStatus::Running
        || (before == ThreadStatus::Running && now == owner_lost)
        || super::run_permit::took_over_a_dead_run();
    if left_running {
        return settle_taken_over(shared, state, policy).await;
    }
    if now == ThreadStatus::AwaitingApproval && super::resuming::waiting_calls(shared).await?.is_empty() {
        return Ok(Settlement::FinishParkedStep);
    }
    Ok(Settlement::Nothing)
}

/// At the start of a run under its hold: when the hold was taken over from an owner that died
/// mid-run (a shared store's dead owner), the dead run is settled first and stopped: the run
/// that starts now goes on with its own message.
pub(crate) async fn settle_a_dead_run(shared: &ThreadShared, state: &ThreadState) -> Result<(), RuntimeError> {
    if super::run_permit::took_over_a_dead_run() {
        // Boxed: the rare path, whose future every run's would otherwise carry inline.
        Box::pin(settle_taken_over(shared, state, RecoveryPolicy::Settle)).await?;
    }
    Ok(())
}

/// Settles a dead owner's run. A parked step first (A4): a call that was running is
/// interrupted and never runs again; while calls still wait, the thread waits again; once all
/// are decided, the step is finished (its approved calls run, O6), by the continued turn under
/// `Resume`. Then every open tool call is answered, and the turn goes on (`Resume`) or stops
/// `failed (owner_lost)` (`Settle`).
async fn settle_taken_over(
    shared: &ThreadShared,
    state: &ThreadState,
    policy: RecoveryPolicy,
) -> Result<Settlement, RuntimeError> {
    match super::resuming::interrupt_parked(shared, state).await? {
        ParkedStep::Waiting => {
            shared.journal.end_run(ThreadStatus::AwaitingApproval).await;
            return Ok(Settlement::Settled);
        }
        ParkedStep::Decided if policy == RecoveryPolicy::Resume => return Ok(Settlement::FinishParkedStep),
        ParkedStep::Decided => super::resuming::settle_decided(shared, state).await?,
        ParkedStep::None => {}
    }
    answer_open_tool_calls(shared, state).await?;
    match policy {
        RecoveryPolicy::Resume => Ok(Settlement::ContinueTurn),
        RecoveryPolicy::Settle => {
            shared.journal.end_run(ThreadStatus::Failed(FailReason::OwnerLost)).await;
            Ok(Settlement::Settled)
        }
    }
}

/// The settled thread's turn goes on, as `settlement` says; its outcome is logged.
async fn continue_turn(shared: &Arc<ThreadShared>, state: &mut ThreadState, settlement: Settlement) {
    let outcome = match settlement {
        Settlement::ContinueTurn => resume_turn(shared, state).await,
        Settlement::FinishParkedStep => {
            let mut run = super::turn::RunGuard::new(shared, state);
            let finished = super::resuming::finish_step(shared, run.state(), super::resuming::Finish::Resume).await;
            match run.settle(finished).await {
                Ok(Some(outcome)) => Ok(outcome),
                // Nothing was parked after all: the turn goes on from its history.
                Ok(None) => resume_turn(shared, state).await,
                Err(error) => Err(error),
            }
        }
        Settlement::Nothing | Settlement::Settled => return,
    };
    match outcome {
        Ok(outcome) => {
            tracing::info!(target: "hooks_runtime::recovery", thread = %shared.id, "the interrupted turn went on: {outcome}")
        }
        Err(error) => {
            tracing::error!(target: "hooks_runtime::recovery", thread = %shared.id, "the interrupted turn could not go on: {error}")
        }
    }
}

/// O8: the turn goes on from its stored history, as a run: the model is asked again, unless
/// the history already ends with the turn's reply (the process died just after storing it).
async fn resume_turn(shared: &Arc<ThreadShared>, state: &mut ThreadState) -> Result<RunOutcome, RuntimeError> {
    let history = shared.journal.messages().await?;
    let agent = shared.agent.current();
    let side = Thread::responding_side(&agent);
    let mut run = super::turn::RunGuard::new(shared, state);
    let resumed = async {
        super::turn::begin(shared, run.state(), side, true).await;
        let mut outcome = RunOutcome::running();
        let end = if replied(&history) {
            TurnEnd::Replied
        } else {
            super::turn::run_execution(shared, run.state(), &agent, side, &mut outcome).await?
        };
        Ok(super::turn::finish(shared, run.state(), end, outcome).await)
    }
    .await;
    run.settle(resumed).await
}

/// Whether a turn's history ends with its reply: an assistant message that calls no tool.
fn replied(history: &[hooks_core::HookMessage]) -> bool {
    history
        .iter()
        .rev()
        .find(|message| message.silent != Some(true))
        .is_some_and(|message| message.role == Role::Assistant && message.tool_calls.is_none())
}

/// Gives every stored tool call without a result an error result, so the history is one a
/// provider accepts.
async fn answer_open_tool_calls(shared: &ThreadShared, state: &ThreadState) -> Result<(), RuntimeError> {
    let history = shared.journal.messages().await?;
    let answered: HashSet<&str> = history
        .iter()
        .filter(|message| message.role == Role::Tool)
        .filter_map(|message| message.tool_call_id.as_deref())
        .collect();
    let open: Vec<HookToolCall> = history
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .filter_map(|message| message.tool_calls.as_deref())
        .filter_map(|calls| serde_json::from_str::<Vec<HookToolCall>>(calls).ok())
        .flatten()
        .filter(|call| !answered.contains(call.id.as_str()))
        .collect();
    let pipeline = Pipeline::at_rest(shared);
    for call in &open {
        let message = super::tool_calls::interrupted_message(shared, call);
        messages::create(&pipeline, state, message, FailureRule::KeepLastGood).await.map_err(|error| match error {
            messages::CreateError::Store(error) => RuntimeError::Store(error),
            other => {
                // The hook's error stays the cause, for a caller that walks the source chain.
                let error = other.into_hook_error();
                RuntimeError::Store(crate::store::StoreError::other(error.message().to_owned()).with_source(error))
            }
        })?;
    }
    Ok(())
}

/// The inbox of a recovered thread, one run per input, in order.
async fn run_inbox(thread: &Thread) {
    let inputs = match thread.shared.journal.pending_inputs().await {
        Ok(entries) => entries.into_iter().map(|entry| InputId(entry.id)),
        Err(error) => {
            tracing::error!(target: "hooks_runtime::recovery", thread = %thread.id(), "could not read the recovered thread's inbox: {error}");
            return;
        }
    };
    for input in inputs {
        match thread.run_input(&input).await {
            Ok(Some(outcome)) => {
                tracing::info!(target: "hooks_runtime::recovery", thread = %thread.id(), input = %input, "recovered input ran: {outcome}")
            }
            Ok(None) => {}
            Err(error) => {
                tracing::error!(target: "hooks_runtime::recovery", thread = %thread.id(), input = %input, "a recovered input could not run: {error}")
            }
        }
    }
}
