//! Approvals (A1): a step whose calls wait for a person is parked with the thread; `resuming`
//! finishes it once every such call is decided.
//!
//! The step's calls are governed and run in the model's order. Every call before the first one
//! that waits is stored at once; from that call on, each call is parked (the ones the gate
//! allowed or denied run at once and are parked `done` with their result), so that, once the
//! last decision comes, the results are stored in the model's call order and every call is
//! paired with its result before the next model request (A3).

use std::collections::HashMap;

use hooks_core::{HookToolCall, HookToolResult, Role, ThreadState};
use serde_json::{Value, json};
use tracing::Instrument as _;

use super::TurnEnd;
use super::agents::subagent_relationship;
use super::pipeline::Pipeline;
use super::tool_calls::{self, Admission, CallEnd, Execution};
use crate::approval_records::{ApprovalState, ParkedToolCall};
use crate::events::ThreadEvent;

/// Runs the calls of one model step (none of them a handoff), in the model's order, each
/// governed just before it is carried out; `Some` when the turn ends here (a tool that keeps
/// failing, or calls that wait).
///
/// A call is governed only when it may run: once a tool has failed too many times in a row,
/// the step's later calls are neither governed nor run (no guard, hook or settings script sees
/// them) and each is answered with a result saying so, so that every call of the stored
/// assistant message has its result; the stop's notice comes after them.
pub(crate) async fn run_step(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    calls: &[HookToolCall],
    failures: &mut HashMap<String, u32>,
) -> Option<TurnEnd> {
    let requested_at = crate::ids::now_ms();
    let mut parked = Vec::new();
    let mut stop: Option<(String, u32)> = None;
    for (position, call) in calls.iter().enumerate() {
        let position = position as u32;
        if let Some((tool, streak)) = &stop {
            not_run(pipeline, state, call, tool, *streak).await;
            continue;
        }
        let execution = execution_of(pipeline, &call.function.name);
        let span = tool_calls::tool_span(pipeline, call);
        let (admission, record) = tool_calls::admit(pipeline, state, call).instrument(span.clone()).await;
        if let Admission::Ask { reasons, arguments } = admission {
            span.in_scope(crate::spans::record_tool_waiting);
            let mut waiting =
                ParkedToolCall::new(&call.id, &call.function.name, arguments, position, ApprovalState::Pending);
            waiting.reasons = reasons;
            // G15: the record waits with the call.
            waiting.admission = record;
            waiting.requested_at = requested_at;
            parked.push(waiting);
            continue;
        }
        let (result, end) =
            tool_calls::carry_out(pipeline, state, call, execution, admission).instrument(span.clone()).await;
        let result = tool_calls::complete_call(pipeline, state, call, result, end).instrument(span.clone()).await;
        if parked.is_empty() {
            // Before the first call that waits: stored at once, and counted.
            tool_calls::store_result(pipeline, state, call, &result, end, record.as_ref()).instrument(span).await;
            stop = failed_too_often(pipeline, call, &result, failures);
            continue;
        }
        let arguments = crate::governing::admission::parse_arguments(&call.function.arguments).unwrap_or(Value::Null);
        let mut done = ParkedToolCall::new(&call.id, &call.function.name, arguments, position, ApprovalState::Done);
        done.requested_at = requested_at;
        done.result = Some(kept(&result, end, record.as_ref()));
        parked.push(done);
    }
    if let Some((tool, streak)) = stop {
        return Some(stop_notice(pipeline, state, &tool, streak).await);
    }
    if parked.is_empty() {
        return None;
    }
    Some(park(pipeline, parked).await)
}

/// A call of a step that stopped before it: the `tool_call_done` event and an error result
/// saying it did not run, stored with no tool hook (it was never governed or run).
pub(super) async fn not_run(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    tool: &str,
    streak: u32,
) {
    let result = HookToolResult::error(format!(
        "the tool call was not run: the turn stopped because the tool `{tool}` failed {streak} times in a row"
    ));
    pipeline.shared.events.emit(ThreadEvent::ToolCallDone {
        id: call.id.clone(),
        name: call.function.name.clone(),
        status: result.status,
        denied: false,
        interrupted: false,
    });
    tool_calls::store_result(pipeline, state, call, &result, CallEnd::Ran, None).await;
}

pub(super) fn execution_of(pipeline: &Pipeline<'_>, name: &str) -> Execution {
    match subagent_relationship(pipeline, name) {
        Some(relationship) => Execution::Subagent(relationship),
        None => Execution::Tool,
    }
}

/// The repeated-tool-error stop, as for every stored result: the tool and its streak when
/// the stop is reached; the caller stores [`stop_notice`] once the step's results are stored.
pub(super) fn failed_too_often(
    pipeline: &Pipeline<'_>,
    call: &HookToolCall,
    result: &HookToolResult,
    failures: &mut HashMap<String, u32>,
) -> Option<(String, u32)> {
    if result.is_success() {
        // A tool with no entry has a streak of 0: a success adds none.
        if let Some(streak) = failures.get_mut(&call.function.name) {
            *streak = 0;
        }
        return None;
    }
    let streak = failures.entry(call.function.name.clone()).or_default();
    *streak += 1;
    (*streak >= pipeline.shared.limits.repeated_tool_error_limit).then(|| (call.function.name.clone(), *streak))
}

/// The stop for repeated tool errors: its notice (M10: it may be prevented; the stop still
/// happens) and the turn's end.
pub(super) async fn stop_notice(pipeline: &Pipeline<'_>, state: &ThreadState, tool: &str, streak: u32) -> TurnEnd {
    let notice = hooks_core::MessageRecord::new(
        Role::User,
        format!("The tool `{tool}` failed {streak} times in a row; the turn stops here."),
    );
    let _ = super::messages::create(pipeline, state, notice, crate::dispatch::FailureRule::Prevent).await;
    TurnEnd::Stopped(crate::reasons::StopReason::RepeatedToolError)
}

/// A result as a parked call keeps it.
pub(super) fn kept(
    result: &HookToolResult,
    end: CallEnd,
    admission: Option<&crate::admission_record::AdmissionRecord>,
) -> Value {
    let mut kept = json!({ "result": result, "denied": end.denied() });
    if end.interrupted() {
        kept["interrupted"] = json!(true);
    }
    if let Some(record) = admission {
        kept[crate::admission_record::MESSAGE_FIELD] = json!(record);
    }
    kept
}

/// The decision record a kept result carries, if any.
pub(super) fn kept_admission(value: &Value) -> Option<crate::admission_record::AdmissionRecord> {
    serde_json::from_value(value.get(crate::admission_record::MESSAGE_FIELD)?.clone()).ok()
}

/// A kept result, as it was kept.
pub(super) fn unkept(value: &Value) -> Option<(HookToolResult, CallEnd)> {
    let result = serde_json::from_value(value.get("result")?.clone()).ok()?;
    let flag = |name: &str| value.get(name).and_then(Value::as_bool).unwrap_or(false);
    let end = if flag("denied") {
        CallEnd::Denied
    } else if flag("interrupted") {
        CallEnd::Interrupted
    } else {
        CallEnd::Ran
    };
    Some((result, end))
}

/// A1: the step's calls are stored with the thread, then announced; the run stops.
async fn park(pipeline: &Pipeline<'_>, parked: Vec<ParkedToolCall>) -> TurnEnd {
    let shared = pipeline.shared;
    if let Err(error) = shared.journal.park(&parked).await {
        tracing::error!(target: "hooks_runtime::thread", thread = %shared.id, "could not park the tool calls that wait for approval: {error}");
        return TurnEnd::Failed(crate::reasons::FailReason::StoreError);
    }
    for call in parked.iter().filter(|call| call.state == ApprovalState::Pending) {
        // K11: a settings file's Notification hooks learn that a call waits for a person.
        super::event_hooks::notify_waiting(shared, &call.tool).await;
    }
    TurnEnd::AwaitingApproval
}
