//! Finishing a parked step (A3-A5): once every waiting call is decided the approved ones run
//! (each marked `running` first) and the turn goes on; an abort denies the waiting ones; a
//! recovered process records a call that was running as interrupted. The results are stored in
//! the model's call order. Every write goes through the journal, whose rules 3 and 4 say how a
//! decision and an abort that race end (O7).

use std::collections::HashSet;
use std::sync::Arc;

use hooks_core::{ExecutionState, HookToolCall, HookToolResult, Role, ThreadState};
use tracing::Instrument as _;

use super::parking::{execution_of, kept, kept_admission, unkept};
use super::pipeline::Pipeline;
use super::tool_calls::{self, CallEnd, INTERRUPTED_TOOL_CALL};
use super::{RunOutcome, RuntimeError, ThreadShared, TurnEnd};
use crate::approval_records::{ApprovalDecision, ApprovalState, ParkedToolCall, ToolCallChange};
use crate::store::StoreError;

/// Who decided, in the ledger, a call that an abort denied.
const ABORT: &str = "abort";

/// The error result of a call whose run was aborted while it waited for approval.
pub(crate) const ABORTED_APPROVAL: &str = "the run was aborted while this tool call waited for approval";

/// The ids of the calls that wait for a decision.
pub(crate) async fn waiting_calls(shared: &ThreadShared) -> Result<Vec<String>, StoreError> {
    let parked = shared.journal.parked_calls().await?;
    Ok(parked.into_iter().filter(|call| call.state == ApprovalState::Pending).map(|call| call.id).collect())
}

/// A5: a message for a thread whose calls wait is refused before anything is stored.
pub(crate) async fn refuse_while_waiting(shared: &ThreadShared) -> Result<(), RuntimeError> {
    let calls = waiting_calls(shared).await?;
    if calls.is_empty() { Ok(()) } else { Err(RuntimeError::AwaitingApproval { calls }) }
}

/// How a parked step is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finish {
    /// Every call was decided: the approved ones run, and the turn goes on.
    Resume,
    /// The run was aborted: no parked call runs, and the run stops `aborted`.
    Abort,
}

/// Finishes the parked step, under the run lock and hold: `None` when there is nothing to
/// finish (no parked step, or calls still waiting when resuming).
pub(crate) async fn finish_step(
    shared: &Arc<ThreadShared>,
    state: &mut ThreadState,
    how: Finish,
) -> Result<Option<RunOutcome>, RuntimeError> {
    let journal = &shared.journal;
    let parked = journal.parked_calls().await?;
    if parked.is_empty() {
        return Ok(None);
    }
    if how == Finish::Abort {
        for call in parked.iter().filter(|call| call.state == ApprovalState::Pending) {
            let change = ToolCallChange::new(&call.id, ApprovalState::Pending, ApprovalState::Denied)
                .with_reason(ABORTED_APPROVAL)
                .by(ABORT);
            // Lost to a decision that came first: that decision stands (journal rule 4).
            journal.decide(&change, ApprovalDecision::Denied).await?;
        }
    }
    let parked = journal.decided_calls().await?;
    if parked.iter().any(|call| call.state == ApprovalState::Pending) {
        return Ok(None);
    }
    let agent = shared.agent.current();
    let side = super::Thread::responding_side(&agent);
    // The run begins with its abort signal out of an abort's reach until the decided calls are
    // carried out, their results stored and the step settled (journal rule 4): an abort
    // meanwhile is noted, and fires once they are.
    let execution = ExecutionState::new(crate::ids::new_id("flow"), side);
    let abort = execution.abort_signal.clone();
    state.execution = Some(execution);
    journal.begin_run(None, true).await;
    let mut outcome = RunOutcome::running();
    let results = carry_out_parked(shared, state, &parked).await?;
    let state_ref: &ThreadState = state;
    store_in_order(shared, state_ref, &results).await?;
    journal.settle_parked().await?;
    journal.arm_abort(abort.clone());
    let end = match how {
        Finish::Resume if abort.is_aborted() => TurnEnd::Stopped(crate::reasons::StopReason::Aborted),
        Finish::Resume => super::turn::run_execution(shared, state, &agent, side, &mut outcome).await?,
        Finish::Abort => TurnEnd::Stopped(crate::reasons::StopReason::Aborted),
    };
    Ok(Some(super::turn::finish(shared, state, end, outcome).await))
}

/// Each parked call's result, in call order: approved calls run (marked `running` first, A4),
/// denied ones get their denial, kept results are read back. An approved call runs under an
/// abort too: its approval came first and was announced, so the abort only denies the calls
/// still waiting and stops what follows (journal rule 4; O7: one outcome, the same in the
/// store, the events and the model's result).
async fn carry_out_parked(
    shared: &ThreadShared,
    state: &ThreadState,
    parked: &[ParkedToolCall],
) -> Result<Vec<Carried>, RuntimeError> {
    let journal = &shared.journal;
    let pipeline = Pipeline::for_state(shared, state);
    let mut results = Vec::with_capacity(parked.len());
    for row in parked {
        let call = HookToolCall::new(row.id.clone(), row.tool.clone(), row.arguments.to_string());
        // G15: a call that waited keeps its record; a kept result carries one.
        let admission = row.admission.clone().or_else(|| row.result.as_ref().and_then(kept_admission));
        // A call done before the step parked had its span then.
        let span = match row.state {
            ApprovalState::Done => tracing::Span::none(),
            _ => tool_calls::tool_span(&pipeline, &call),
        };
        let (result, end) = match row.state {
            ApprovalState::Done => match row.result.as_ref().and_then(unkept) {
                Some(kept) => {
                    results.push((call, kept.0, kept.1, admission));
                    continue;
                }
                None => (HookToolResult::error(INTERRUPTED_TOOL_CALL), CallEnd::Interrupted),
            },
            ApprovalState::Approved => {
                if !journal.start_call(&row.id).await? {
                    // Another run took it: it is that run's to finish.
                    return Err(RuntimeError::Store(StoreError::conflict(format!(
                        "the approved tool call `{}` was taken by another run",
                        row.id
                    ))));
                }
                let execution = execution_of(&pipeline, &row.tool);
                let context = tool_calls::approval_context(&row.reasons);
                let arguments = Ok(row.arguments.clone());
                let result = tool_calls::execute(&pipeline, state, &call, execution, arguments, context)
                    .instrument(span.clone())
                    .await;
                (result, CallEnd::Ran)
            }
            ApprovalState::Denied => {
                let reason = row.decision_reason.as_deref().unwrap_or("a person denied it");
                (tool_calls::denial_result(None, reason), CallEnd::Denied)
            }
            ApprovalState::Running => (HookToolResult::error(INTERRUPTED_TOOL_CALL), CallEnd::Interrupted),
            _ => (tool_calls::denial_result(None, ABORTED_APPROVAL), CallEnd::Denied),
        };
        let result = tool_calls::complete_call(&pipeline, state, &call, result, end).instrument(span).await;
        journal.keep_result(&row.id, row.state_after_start(), kept(&result, end, admission.as_ref())).await?;
        results.push((call, result, end, admission));
    }
    Ok(results)
}

impl ParkedToolCall {
    /// The state this call is in once its run began: an approved call was moved to `running`.
    fn state_after_start(&self) -> ApprovalState {
        match self.state {
            ApprovalState::Approved => ApprovalState::Running,
            state => state,
        }
    }
}

/// A parked call's result as the step carries it out: the call, its result, how it ended, and
/// its decision record (G15).
type Carried = (HookToolCall, HookToolResult, CallEnd, Option<crate::admission_record::AdmissionRecord>);

/// Stores the step's results in call order, skipping a call whose result is already stored
/// (a finish that stopped half way and is done again).
async fn store_in_order(shared: &ThreadShared, state: &ThreadState, results: &[Carried]) -> Result<(), RuntimeError> {
    let history = shared.journal.messages().await?;
    let stored: HashSet<&str> = history
        .iter()
        .filter(|message| message.role == Role::Tool)
        .filter_map(|message| message.tool_call_id.as_deref())
        .collect();
    let pipeline = Pipeline::for_state(shared, state);
    for (call, result, end, admission) in results.iter().filter(|(call, ..)| !stored.contains(call.id.as_str())) {
        tool_calls::store_result(&pipeline, state, call, result, *end, admission.as_ref()).await;
    }
    Ok(())
}

/// A parked step, as a recovered process found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParkedStep {
    /// Nothing is parked.
    None,
    /// Calls still wait for a decision.
    Waiting,
    /// Every call is decided; the step is not finished.
    Decided,
}

/// Recovery of a thread whose process stopped with a parked step: a call that was running is
/// recorded as interrupted and never runs again (A4). Says whether calls still wait.
pub(crate) async fn interrupt_parked(shared: &ThreadShared, state: &ThreadState) -> Result<ParkedStep, RuntimeError> {
    let parked = shared.journal.parked_calls().await?;
    if parked.is_empty() {
        return Ok(ParkedStep::None);
    }
    let pipeline = Pipeline::at_rest(shared);
    for row in parked.iter().filter(|row| row.state == ApprovalState::Running) {
        let call = HookToolCall::new(row.id.clone(), row.tool.clone(), row.arguments.to_string());
        let interrupted = HookToolResult::error(INTERRUPTED_TOOL_CALL);
        let result = tool_calls::complete_call(&pipeline, state, &call, interrupted, CallEnd::Interrupted).await;
        let kept = kept(&result, CallEnd::Interrupted, row.admission.as_ref());
        shared.journal.keep_result(&row.id, ApprovalState::Running, kept).await?;
    }
    let waiting = parked.iter().any(|row| row.state == ApprovalState::Pending);
    Ok(if waiting { ParkedStep::Waiting } else { ParkedStep::Decided })
}

/// Finishes a decided parked step without going on with the turn: its approved calls run (O6),
/// and every result is stored in call order.
pub(crate) async fn settle_decided(shared: &ThreadShared, state: &ThreadState) -> Result<(), RuntimeError> {
    let parked = shared.journal.decided_calls().await?;
    let results = carry_out_parked(shared, state, &parked).await?;
    store_in_order(shared, state, &results).await?;
    shared.journal.settle_parked().await?;
    Ok(())
}
