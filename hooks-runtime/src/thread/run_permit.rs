//! Scale-out: a run under the store's permit for its thread ([`RunPermit`]). A permit lost
//! mid-run (a shared store's lease expired, or another process took the thread over) stops the
//! run at its next step, as an abort would, and the run ends `failed (lease_lost)`; the store
//! already refuses what the run still tries to write.
//!
//! The permit is released only after the thread's events queued so far reach the store, so that
//! the next owner's events, in any process, come after this run's.

use std::future::Future;
use std::sync::Arc;

use super::ThreadShared;
use crate::events::ThreadStatus;
use crate::reasons::FailReason;
use crate::store::RunPermit;

tokio::task_local! {
    /// The permit of the run in this task, for `finish` to word the status.
    static PERMIT: Arc<RunPermit>;
}

/// Runs the future `run` makes (a whole run, settled) under `permit`, then releases the permit.
/// Under a permit, the run first reads the thread's agent and values back
/// (`ThreadShared::follow_the_store`).
///
/// `run` makes the future here rather than being it: an `async fn` keeps its arguments apart
/// from what it awaits, so a future argument would be held twice and copied between the two.
/// A store without permits (the in-memory one) runs it at once; the permit's path is boxed, so
/// that its watch of the permit and its release do not make every run's future larger (a run's
/// futures are moved as it starts them).
pub(crate) async fn holding<F: Future>(
    shared: &ThreadShared,
    permit: Option<RunPermit>,
    run: impl FnOnce() -> F,
) -> F::Output {
    match permit {
        None => run().await,
        Some(permit) => Box::pin(holding_permit(shared, permit, run)).await,
    }
}

/// [`holding`] with a permit.
async fn holding_permit<F: Future>(shared: &ThreadShared, permit: RunPermit, run: impl FnOnce() -> F) -> F::Output {
    // A store that holds runs is one other processes may share: what they changed counts.
    shared.follow_the_store().await;
    let permit = Arc::new(permit);
    let output = PERMIT
        .scope(permit.clone(), async {
            let mut run = std::pin::pin!(run());
            tokio::select! {
                output = &mut run => return output,
                () = permit.lost() => {}
            }
            tracing::warn!(target: "hooks_runtime::thread", thread = %shared.id, "the run's lease on the thread was lost; stopping the run at its next step");
            shared.journal.abort();
            run.await
        })
        .await;
    shared.events.flush_published().await;
    // The scope's clone is gone, so this is the only one left.
    if let Some(permit) = Arc::into_inner(permit) {
        permit.release().await;
    }
    output
}

/// Whether the run in this task holds a thread taken over from an owner that died mid-run.
pub(crate) fn took_over_a_dead_run() -> bool {
    PERMIT.try_with(|permit| permit.took_over_a_dead_run()).unwrap_or(false)
}

/// The status a run ends with: `failed (lease_lost)` when its permit was lost, whatever else
/// it was ending with.
pub(crate) fn final_status(status: ThreadStatus) -> ThreadStatus {
    if PERMIT.try_with(|permit| permit.is_lost()).unwrap_or(false) {
        ThreadStatus::Failed(FailReason::LeaseLost)
    } else {
        status
    }
}
