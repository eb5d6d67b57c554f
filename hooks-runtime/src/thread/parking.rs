//! Approvals (A1-A5): a step whose calls wait for a person is parked with the thread, and once
//! every such call is decided the step is finished and the turn goes on.
//!
//! The step's calls run in the model's order. Every call before the first one that waits is
//! stored at once; from that call on, each call is parked (the ones the gate allowed or denied
//! run at once and are parked `done` with their result), so that, once the last decision
//! comes, the results are stored in the model's call order and every call is paired with its
//! result before the next model request (A3).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hooks_core::{HookToolCall, HookToolResult, Role, ThreadState};
use serde_json::{Value, json};

use super::agents::subagent_relationship;
use super::pipeline::Pipeline;
use super::tool_calls::{self, Admission, Execution};
use super::{RunOutcome, RuntimeError, ThreadShared, TurnEnd};
use crate::events::ThreadEvent;
use crate::governing::{ApprovalDecision, ApprovalState, ParkedToolCall, ToolCallChange};
use crate::store::StoreError;

/// The error result of a call whose run was aborted while it waited for approval.
pub(crate) const ABORTED_APPROVAL: &str = "the run was aborted while this tool call waited for approval";

/// Runs the calls of one model step (none of them a handoff): governed first, then carried
/// out in order; `Some` when the turn ends here (a tool that keeps failing, or calls that wait).
pub(crate) async fn run_step(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    calls: &[HookToolCall],
    failures: &mut HashMap<String, u32>,
) -> Option<TurnEnd> {
    let mut admitted = Vec::with_capacity(calls.len());
    for call in calls {
        let execution = execution_of(pipeline, &call.function.name);
        let admission = tool_calls::admit(pipeline, state, call).await;
        admitted.push((call, execution, admission));
    }
    let first_wait = admitted.iter().position(|(_, _, admission)| matches!(admission, Admission::Ask { .. }));
    let Some(first_wait) = first_wait else {
        for (call, execution, admission) in admitted {
            let (result, denied) = tool_calls::carry_out(pipeline, state, call, execution, admission).await;
            let result = tool_calls::finish_call(pipeline, state, call, result, denied).await;
            if let Some(end) = count_failure(pipeline, state, call, &result, failures).await {
                return Some(end);
            }
        }
        return None;
    };
    let requested_at = crate::ids::now_ms();
    let mut parked = Vec::new();
    for (position, (call, execution, admission)) in admitted.into_iter().enumerate() {
        let position = position as u32;
        if let Admission::Ask { reasons, arguments } = admission {
            let mut waiting =
                ParkedToolCall::new(&call.id, &call.function.name, arguments, position, ApprovalState::Pending);
            waiting.reasons = reasons;
            waiting.requested_at = requested_at;
            parked.push(waiting);
            continue;
        }
        let (result, denied) = tool_calls::carry_out(pipeline, state, call, execution, admission).await;
        let result = tool_calls::complete_call(pipeline, state, call, result, denied).await;
        if (position as usize) < first_wait {
            tool_calls::store_result(pipeline, state, call, &result, denied).await;
            continue;
        }
        let arguments = crate::governing::gate::parse_arguments(&call.function.arguments).unwrap_or(Value::Null);
        let mut done = ParkedToolCall::new(&call.id, &call.function.name, arguments, position, ApprovalState::Done);
        done.requested_at = requested_at;
        done.result = Some(kept(&result, denied));
        parked.push(done);
    }
    Some(park(pipeline, parked).await)
}

fn execution_of(pipeline: &Pipeline<'_>, name: &str) -> Execution {
    match subagent_relationship(pipeline, name) {
        Some(relationship) => Execution::Subagent(relationship),
        None => Execution::Tool,
    }
}

/// The repeated-tool-error stop, as for every stored result.
async fn count_failure(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    result: &HookToolResult,
    failures: &mut HashMap<String, u32>,
) -> Option<TurnEnd> {
    let streak = failures.entry(call.function.name.clone()).or_default();
    if result.is_success() {
        *streak = 0;
        return None;
    }
    *streak += 1;
    if *streak < pipeline.shared.runtime.repeated_tool_error_limit {
        return None;
    }
    // M10: the notice may be prevented; the stop still happens.
    let notice = hooks_core::MessageRecord::new(
        Role::User,
        format!("The tool `{}` failed {} times in a row; the turn stops here.", call.function.name, streak),
    );
    let _ = super::messages::create(pipeline, state, notice, crate::dispatch::FailureRule::Prevent).await;
    Some(TurnEnd::Stopped("repeated_tool_error"))
}

/// A result as a parked call keeps it.
fn kept(result: &HookToolResult, denied: bool) -> Value {
    json!({ "result": result, "denied": denied })
}

/// A kept result, as it was kept.
fn unkept(value: &Value) -> Option<(HookToolResult, bool)> {
    let result = serde_json::from_value(value.get("result")?.clone()).ok()?;
    Some((result, value.get("denied").and_then(Value::as_bool).unwrap_or(false)))
}

/// A1: the step's calls are stored with the thread, then announced; the run stops.
async fn park(pipeline: &Pipeline<'_>, parked: Vec<ParkedToolCall>) -> TurnEnd {
    let shared = pipeline.shared;
    if let Err(error) = shared.runtime.store.park_tool_calls(&shared.id, &parked).await {
        tracing::error!(target: "hooks_runtime::thread", thread = %shared.id, "could not park the tool calls that wait for approval: {error}");
        return TurnEnd::Failed("store_error");
    }
    for call in parked.iter().filter(|call| call.state == ApprovalState::Pending) {
        shared.emit(ThreadEvent::ApprovalRequested {
            id: call.id.clone(),
            name: call.tool.clone(),
            reasons: call.reasons.clone(),
        });
    }
    TurnEnd::AwaitingApproval
}

/// The ids of the calls that wait for a decision.
pub(crate) async fn waiting_calls(shared: &ThreadShared) -> Result<Vec<String>, StoreError> {
    let parked = shared.runtime.store.parked_tool_calls(&shared.id).await?;
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
    let store = &shared.runtime.store;
    let parked = store.parked_tool_calls(&shared.id).await?;
    if parked.is_empty() {
        return Ok(None);
    }
    if how == Finish::Abort {
        for call in parked.iter().filter(|call| call.state == ApprovalState::Pending) {
            let change = ToolCallChange::to(ApprovalState::Denied).with_reason(ABORTED_APPROVAL);
            if store.advance_tool_call(&shared.id, &call.id, ApprovalState::Pending, &change).await? {
                shared.emit(ThreadEvent::ApprovalResolved { id: call.id.clone(), decision: ApprovalDecision::Denied });
            }
        }
    }
    let parked = store.parked_tool_calls(&shared.id).await?;
    if parked.iter().any(|call| call.state == ApprovalState::Pending) {
        return Ok(None);
    }
    let side = super::Thread::responding_side(&shared.agent());
    super::turn::begin(shared, state, side).await;
    let mut outcome = RunOutcome::running();
    let results = carry_out_parked(shared, state, &parked, how).await?;
    let state_ref: &ThreadState = state;
    store_in_order(shared, state_ref, &results).await?;
    store.clear_parked_tool_calls(&shared.id).await?;
    let end = match how {
        Finish::Resume => super::turn::run_execution(shared, state, side, &mut outcome).await?,
        Finish::Abort => TurnEnd::Stopped("aborted"),
    };
    Ok(Some(super::turn::finish(shared, state, end, outcome).await))
}

/// Each parked call's result, in call order: approved calls run (marked `running` first, A4),
/// denied ones get their denial, kept results are read back.
async fn carry_out_parked(
    shared: &ThreadShared,
    state: &ThreadState,
    parked: &[ParkedToolCall],
    how: Finish,
) -> Result<Vec<(HookToolCall, HookToolResult, bool)>, RuntimeError> {
    let store = &shared.runtime.store;
    let pipeline = Pipeline::for_state(shared, state);
    let mut results = Vec::with_capacity(parked.len());
    for row in parked {
        let call = HookToolCall::new(row.id.clone(), row.tool.clone(), row.arguments.to_string());
        let (result, denied) = match row.state {
            ApprovalState::Done => match row.result.as_ref().and_then(unkept) {
                Some(kept) => {
                    results.push((call, kept.0, kept.1));
                    continue;
                }
                None => (HookToolResult::error(super::recovery::INTERRUPTED_TOOL_CALL), false),
            },
            ApprovalState::Approved if how == Finish::Resume => {
                let running = ToolCallChange::to(ApprovalState::Running);
                if !store.advance_tool_call(&shared.id, &row.id, ApprovalState::Approved, &running).await? {
                    // Another run took it: it is that run's to finish.
                    return Err(RuntimeError::Store(StoreError(format!(
                        "the approved tool call `{}` was taken by another run",
                        row.id
                    ))));
                }
                let execution = execution_of(&pipeline, &row.tool);
                let result = tool_calls::execute(&pipeline, state, &call, execution, Ok(row.arguments.clone())).await;
                (result, false)
            }
            ApprovalState::Denied => {
                let reason = row.decision_reason.as_deref().unwrap_or("a person denied it");
                (tool_calls::denial_result(None, reason), true)
            }
            ApprovalState::Running => (HookToolResult::error(super::recovery::INTERRUPTED_TOOL_CALL), false),
            _ => (tool_calls::denial_result(None, ABORTED_APPROVAL), true),
        };
        let result = tool_calls::complete_call(&pipeline, state, &call, result, denied).await;
        let change = ToolCallChange::to(ApprovalState::Done).with_result(kept(&result, denied));
        store.advance_tool_call(&shared.id, &row.id, row.state_after_start(how), &change).await?;
        results.push((call, result, denied));
    }
    Ok(results)
}

impl ParkedToolCall {
    /// The state this call is in once its run began: an approved call was moved to `running`.
    fn state_after_start(&self, how: Finish) -> ApprovalState {
        match (self.state, how) {
            (ApprovalState::Approved, Finish::Resume) => ApprovalState::Running,
            (state, _) => state,
        }
    }
}

/// Stores the step's results in call order, skipping a call whose result is already stored
/// (a finish that stopped half way and is done again).
async fn store_in_order(
    shared: &ThreadShared,
    state: &ThreadState,
    results: &[(HookToolCall, HookToolResult, bool)],
) -> Result<(), RuntimeError> {
    let history = shared.runtime.store.messages(&shared.id).await?;
    let stored: HashSet<&str> = history
        .iter()
        .filter(|message| message.role == Role::Tool)
        .filter_map(|message| message.tool_call_id.as_deref())
        .collect();
    let pipeline = Pipeline::for_state(shared, state);
    for (call, result, denied) in results.iter().filter(|(call, ..)| !stored.contains(call.id.as_str())) {
        tool_calls::store_result(&pipeline, state, call, result, *denied).await;
    }
    Ok(())
}

/// Recovery of a thread whose process stopped with a parked step: a call that was running is
/// recorded as interrupted and never runs again (A4). With calls still waiting, the thread
/// waits again; otherwise the step is finished without running anything and the caller settles
/// the run. `true` when calls still wait.
pub(crate) async fn recover_parked(shared: &ThreadShared, state: &ThreadState) -> Result<bool, RuntimeError> {
    let store = &shared.runtime.store;
    let parked = store.parked_tool_calls(&shared.id).await?;
    if parked.is_empty() {
        return Ok(false);
    }
    let pipeline = Pipeline::at_rest(shared);
    for row in parked.iter().filter(|row| row.state == ApprovalState::Running) {
        let call = HookToolCall::new(row.id.clone(), row.tool.clone(), row.arguments.to_string());
        let interrupted = HookToolResult::error(super::recovery::INTERRUPTED_TOOL_CALL);
        let result = tool_calls::complete_call(&pipeline, state, &call, interrupted, false).await;
        let change = ToolCallChange::to(ApprovalState::Done).with_result(kept(&result, false));
        store.advance_tool_call(&shared.id, &row.id, ApprovalState::Running, &change).await?;
    }
    let parked = store.parked_tool_calls(&shared.id).await?;
    if parked.iter().any(|row| row.state == ApprovalState::Pending) {
        return Ok(true);
    }
    let results = carry_out_parked(shared, state, &parked, Finish::Abort).await?;
    store_in_order(shared, state, &results).await?;
    store.clear_parked_tool_calls(&shared.id).await?;
    Ok(false)
}
