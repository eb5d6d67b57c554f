//! Approvals (A1): a step whose calls wait for a person is parked with the thread; `resuming`
//! finishes it once every such call is decided.
//!
//! The step's calls run in the model's order. Every call before the first one that waits is
//! stored at once; from that call on, each call is parked (the ones the gate allowed or denied
//! run at once and are parked `done` with their result), so that, once the last decision
//! comes, the results are stored in the model's call order and every call is paired with its
//! result before the next model request (A3).

use std::collections::HashMap;

use hooks_core::{HookToolCall, HookToolResult, Role, ThreadState};
use serde_json::{Value, json};

use super::TurnEnd;
use super::agents::subagent_relationship;
use super::pipeline::Pipeline;
use super::tool_calls::{self, Admission, Execution};
use crate::approvals::{ApprovalState, ParkedToolCall};
use crate::events::ThreadEvent;

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

pub(super) fn execution_of(pipeline: &Pipeline<'_>, name: &str) -> Execution {
    match subagent_relationship(pipeline, name) {
        Some(relationship) => Execution::Subagent(relationship),
        None => Execution::Tool,
    }
}

/// The repeated-tool-error stop, as for every stored result.
pub(super) async fn count_failure(
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
    Some(TurnEnd::Stopped(crate::reasons::StopReason::RepeatedToolError))
}

/// A result as a parked call keeps it.
pub(super) fn kept(result: &HookToolResult, denied: bool) -> Value {
    json!({ "result": result, "denied": denied })
}

/// A kept result, as it was kept.
pub(super) fn unkept(value: &Value) -> Option<(HookToolResult, bool)> {
    let result = serde_json::from_value(value.get("result")?.clone()).ok()?;
    Some((result, value.get("denied").and_then(Value::as_bool).unwrap_or(false)))
}

/// A1: the step's calls are stored with the thread, then announced; the run stops.
async fn park(pipeline: &Pipeline<'_>, parked: Vec<ParkedToolCall>) -> TurnEnd {
    let shared = pipeline.shared;
    if let Err(error) = shared.runtime.store.park_tool_calls(&shared.id, &parked).await {
        tracing::error!(target: "hooks_runtime::thread", thread = %shared.id, "could not park the tool calls that wait for approval: {error}");
        return TurnEnd::Failed(crate::reasons::FailReason::StoreError);
    }
    for call in parked.iter().filter(|call| call.state == ApprovalState::Pending) {
        shared.events.emit(ThreadEvent::ApprovalRequested {
            id: call.id.clone(),
            name: call.tool.clone(),
            reasons: call.reasons.clone(),
        });
        // K11: a settings file's Notification hooks learn that a call waits for a person.
        super::settings_hooks::notify_waiting(shared, &call.tool).await;
    }
    TurnEnd::AwaitingApproval
}
