//! Recovery: settling the runs that a stopped process left unsettled, and running the inputs it
//! had accepted.
//!
//! When: once at a runtime's first use (its first `create_thread` or `open_thread`), and
//! whenever [`Runtime::recover`](crate::Runtime::recover) is called; on a store that several
//! processes share ([`MessageStore::recovery_sweep_interval`](crate::store::MessageStore::recovery_sweep_interval)),
//! also every sweep interval, by a task that lives as long as the runtime.
//!
//! What, per thread the store names ([`MessageStore::unsettled_threads`](crate::store::MessageStore::unsettled_threads)),
//! under the thread's run lock and the store's hold on it, as a run would be:
//! - a thread still `running` becomes `failed (owner_lost)`, stored and sent as a status event;
//! - its history is made provider-valid: every stored tool call without a result gets an error
//!   result (`tool_status: error`) saying the run was interrupted. A reply that was streaming
//!   when the process stopped was never stored (only complete messages are), so nothing partial
//!   is left to mark;
//! - then every input still in its inbox runs, one run each, in acceptance order.

use std::collections::HashSet;
use std::sync::{Arc, PoisonError, Weak};

use hooks_core::{HookToolCall, Role, ThreadState};

use super::messages;
use super::pipeline::Pipeline;
use super::{InputId, RuntimeError, Thread, ThreadShared};
use crate::dispatch::FailureRule;
use crate::runtime::inner::RuntimeInner;
use crate::store::{FailReason, ThreadStatus};

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
    /// Threads that could not be recovered, with the error (logged too); the next recovery
    /// tries them again.
    pub failed: Vec<(String, String)>,
    runs: Vec<tokio::task::JoinHandle<()>>,
}

impl Recovery {
    /// Waits until the inbox runs this recovery started have ended.
    pub async fn wait_for_inboxes(&mut self) {
        for run in self.runs.drain(..) {
            let _ = run.await;
        }
    }
}

/// The first use's recovery, once per runtime; later calls return at once. A failure is
/// logged: the thread stays as it was until the next recovery.
pub(crate) async fn on_first_use(runtime: &Arc<RuntimeInner>) {
    runtime
        .recovery
        .first_use
        .get_or_init(|| async {
            match recover(runtime).await {
                Ok(recovery) => log(&recovery),
                Err(error) => {
                    tracing::error!(target: "hooks_runtime::recovery", "could not look for unsettled threads: {error}")
                }
            }
            start_sweeping(runtime);
        })
        .await;
}

/// Starts, once per runtime, the sweeper of a store that several processes share.
pub(crate) fn start_sweeping(runtime: &Arc<RuntimeInner>) {
    let Some(interval) = runtime.store.recovery_sweep_interval() else { return };
    if !runtime.recovery.sweeping.swap(true, std::sync::atomic::Ordering::AcqRel) {
        start_sweeper(Arc::downgrade(runtime), interval);
    }
}

fn log(recovery: &Recovery) {
    if !recovery.settled.is_empty() || !recovery.resumed.is_empty() {
        tracing::warn!(
            target: "hooks_runtime::recovery",
            settled = ?recovery.settled,
            resumed = ?recovery.resumed,
            "recovered threads that a stopped process left unsettled"
        );
    }
}

/// Every interval, while the runtime lives: the recovery of threads whose owner died since.
fn start_sweeper(runtime: Weak<RuntimeInner>, interval: std::time::Duration) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
    handle.spawn(async move {
        loop {
            tokio::time::sleep(interval).await;
            let Some(runtime) = runtime.upgrade() else { return };
            match recover(&runtime).await {
                Ok(recovery) => log(&recovery),
                Err(error) => tracing::warn!(target: "hooks_runtime::recovery", "the recovery sweep failed: {error}"),
            }
        }
    });
}

/// One recovery of every thread the store names as unsettled.
pub(crate) async fn recover(runtime: &Arc<RuntimeInner>) -> Result<Recovery, RuntimeError> {
    let mut recovery = Recovery::default();
    for thread_id in runtime.store.unsettled_threads().await? {
        if runtime.recovery.is_live(&thread_id) {
            continue;
        }
        if !runtime.recovery.busy.lock().unwrap_or_else(PoisonError::into_inner).insert(thread_id.clone()) {
            continue;
        }
        match recover_thread(runtime, &thread_id).await {
            Ok((thread, settled, inputs)) => {
                if settled {
                    recovery.settled.push(thread_id.clone());
                }
                if inputs.is_empty() {
                    done(runtime, &thread_id);
                } else {
                    recovery.resumed.push(thread_id.clone());
                    recovery.runs.push(tokio::spawn(run_inbox(runtime.clone(), thread, inputs)));
                }
            }
            Err(error) => {
                tracing::error!(target: "hooks_runtime::recovery", thread = %thread_id, "could not recover the thread: {error}");
                recovery.failed.push((thread_id.clone(), error.to_string()));
                done(runtime, &thread_id);
            }
        }
    }
    Ok(recovery)
}

fn done(runtime: &RuntimeInner, thread_id: &str) {
    runtime.recovery.busy.lock().unwrap_or_else(PoisonError::into_inner).remove(thread_id);
}

/// Settles one thread; returns it, whether it was left running, and its inbox's inputs.
async fn recover_thread(
    runtime: &Arc<RuntimeInner>,
    thread_id: &str,
) -> Result<(Thread, bool, Vec<InputId>), RuntimeError> {
    let thread = Thread::open(runtime, thread_id).await?;
    let shared = thread.shared.clone();
    let before = thread.status();
    let settled = {
        let state = shared.lock_run().await;
        let permit = runtime.store.hold_run(thread_id).await?;
        super::run_permit::holding(&shared, permit, settle(&shared, &state, before)).await?
    };
    let inputs = runtime.store.pending_inputs(thread_id).await?.into_iter().map(|entry| InputId(entry.id)).collect();
    Ok((thread, settled, inputs))
}

/// Under the thread's hold: a run left `running` is settled. On a shared store, taking the hold
/// of a dead owner has already marked it `failed (owner_lost)`; it is settled all the same
/// (history, event), since nobody else did.
async fn settle(shared: &Arc<ThreadShared>, state: &ThreadState, before: ThreadStatus) -> Result<bool, RuntimeError> {
    let now = shared
        .runtime
        .store
        .load_thread(&shared.id)
        .await?
        .ok_or_else(|| RuntimeError::UnknownThread(shared.id.clone()))?
        .status;
    let owner_lost = ThreadStatus::Failed(FailReason::OwnerLost);
    let left_running = now == ThreadStatus::Running || (before == ThreadStatus::Running && now == owner_lost);
    if !left_running {
        return Ok(false);
    }
    settle_taken_over(shared, state).await?;
    Ok(true)
}

/// At the start of a run under its hold: when the hold was taken over from an owner that died
/// mid-run (a shared store's expired lease), the dead run is settled first, as recovery would.
pub(crate) async fn settle_a_dead_run(shared: &ThreadShared, state: &ThreadState) -> Result<(), RuntimeError> {
    if super::run_permit::took_over_a_dead_run() {
        settle_taken_over(shared, state).await?;
    }
    Ok(())
}

/// Settles a dead owner's run: its open tool calls answered, `failed (owner_lost)` stored and
/// sent. A parked step is settled first (A4): a call that was running is interrupted and never
/// runs again; while calls still wait, the thread waits again instead.
async fn settle_taken_over(shared: &ThreadShared, state: &ThreadState) -> Result<(), RuntimeError> {
    if super::resuming::recover_parked(shared, state).await? {
        shared.end_run(ThreadStatus::AwaitingApproval).await;
        return Ok(());
    }
    answer_open_tool_calls(shared, state).await?;
    shared.end_run(ThreadStatus::Failed(FailReason::OwnerLost)).await;
    Ok(())
}

/// Gives every stored tool call without a result an error result, so the history is one a
/// provider accepts.
async fn answer_open_tool_calls(shared: &ThreadShared, state: &ThreadState) -> Result<(), RuntimeError> {
    let history = shared.runtime.store.messages(&shared.id).await?;
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
            other => RuntimeError::Store(crate::store::StoreError::other(other.into_hook_error().message())),
        })?;
    }
    Ok(())
}

/// The inbox of a recovered thread, one run per input, in order.
async fn run_inbox(runtime: Arc<RuntimeInner>, thread: Thread, inputs: Vec<InputId>) {
    for input in &inputs {
        match thread.run_input(input).await {
            Ok(Some(outcome)) => {
                tracing::info!(target: "hooks_runtime::recovery", thread = %thread.id(), input = %input, "recovered input ran: {outcome}")
            }
            Ok(None) => {}
            Err(error) => {
                tracing::error!(target: "hooks_runtime::recovery", thread = %thread.id(), input = %input, "a recovered input could not run: {error}")
            }
        }
    }
    done(&runtime, thread.id());
}
