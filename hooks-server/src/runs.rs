//! Runs in the background: what a 202 hands on. A run takes its turn at the thread's run gate
//! and is framed on the thread's event stream by `run_started` and `run_finished`, each with
//! its time (`atUs`, microseconds since the Unix epoch).

use std::future::Future;
use std::sync::Arc;

use hooks_runtime::{RunOutcome, RuntimeError};
use tracing::Instrument;

use crate::dto::events::{AwaitingApproval, Failed, RunEnd, RuntimeErrorReason, StreamEvent};
use crate::hook_runs::now_us;
use crate::thread_entry::{QueueSlot, ThreadEntry};

/// What a background run comes to: an outcome, or `None` when there was nothing left to run
/// (another run took the input; the thread's status is where that run left it).
pub(crate) type RunResult = Result<Option<RunOutcome>, RuntimeError>;

/// Runs `run` after the thread's earlier runs, between `run_started` and `run_finished` with
/// `run_id`. `slot` counts it among the thread's queued inputs until it has finished. A run
/// that fails or panics ends with a `run_finished` that says so; the server goes on.
pub(crate) fn spawn<F, Fut>(entry: Arc<ThreadEntry>, slot: QueueSlot, run_id: String, run: F)
where
    F: FnOnce(Arc<ThreadEntry>) -> Fut + Send + 'static,
    Fut: Future<Output = RunResult> + Send + 'static,
{
    // The request's span, which continues a caller's trace (V3): the run is its child.
    let request = tracing::Span::current();
    tokio::spawn(async move {
        let _slot = slot;
        let _turn = entry.run_gate.turn().await;
        entry.events.log_in_order(StreamEvent::RunStarted { run_id: run_id.clone(), at_us: now_us() }).await;
        // The span names the thread, so that hook spans inside the run can be sent to it.
        let span = tracing::info_span!(target: "hooks_server", parent: &request, "hooks_server_run", thread = %entry.record.id, run = %run_id);
        // The request's span ends with its response and the run's span, not with this task:
        // it is exported before `run_finished` is logged.
        drop(request);
        // A task of its own, so that a panic in the run is a failed run here, not a lost one.
        let result = tokio::spawn(run(entry.clone()).instrument(span)).await;
        let failed = RunEnd::Failed { status: Failed::Failed, reason: RuntimeErrorReason::RuntimeError };
        let end = match result {
            Ok(Ok(outcome)) => {
                // `blocked`: the reason a hook gave the sender when it blocked the run's message.
                let (status, steps, blocked) = match outcome {
                    Some(outcome) => (outcome.status, outcome.steps, outcome.blocked),
                    None => (entry.thread.status(), 0, None),
                };
                RunEnd::Ran { steps, status, blocked }
            }
            // A message accepted just before the run ahead of it parked tool calls: it stays in
            // the inbox, and the client learns why it did not run.
            Ok(Err(RuntimeError::AwaitingApproval { calls })) => {
                tracing::warn!(target: "hooks_server", thread = %entry.record.id, run = %run_id, "a message did not run: tool calls {calls:?} await approval");
                RunEnd::AwaitingApproval { steps: 0, status: AwaitingApproval::AwaitingApproval, pending: calls }
            }
            Ok(Err(error)) => {
                // The runtime's errors name agents, threads and the store, never contents;
                // still, the client gets only the kind.
                tracing::error!(target: "hooks_server", thread = %entry.record.id, run = %run_id, "the run could not start: {error}");
                failed
            }
            Err(error) => {
                tracing::error!(target: "hooks_server", thread = %entry.record.id, run = %run_id, "the run panicked: {error}");
                failed
            }
        };
        entry.events.log_in_order(StreamEvent::RunFinished { run_id, end, at_us: now_us() }).await;
    });
}
