//! Tool calls (T4-T7): the admission pipeline's answer (asked once per call), the tool, then
//! `tool_call_done`, `after_tool_call_success|failure`, `before_store_tool_result`, and the
//! tool message through the create pipeline. Events go to subscribers whether or not hooks are
//! selected. The streaming of the calls is `tool_stream.rs`.

use std::time::Instant;

use hooks_core::{
    Attachment, HookKind, HookToolCall, HookToolResult, MessageRecord, Role, ThreadState, ToolCallRecord,
};
use serde_json::{Value, json};
use tracing::Instrument as _;

pub(crate) use super::call_end::CallEnd;
use super::pipeline::Pipeline;
use super::{event_hooks, messages, model_step};
use crate::admission_record::AdmissionRecord;
use crate::dispatch::{self, FailureRule, panics};
use crate::events::ThreadEvent;
pub(crate) use crate::governing::admission::Admission;
use crate::governing::admission::{Review, parse_arguments};
use crate::tool::ToolCallOutcome;

/// How a tool call is carried out: a tool, a handoff, or a subagent relationship.
pub(crate) enum Execution {
    /// A tool of the runtime (or an unknown name, which fails).
    Tool,
    /// A subagent relationship offered as a tool; the result is the child's reply.
    Subagent(&'static str),
}

/// Asks the admission pipeline (G13) about one call whose arguments have fully streamed: the
/// one question `thread/` puts to `governing/` before a tool runs. The decision record goes on
/// the call's span (G15). An abort of the run stops the deciders and refuses the call.
pub(crate) async fn admit(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
) -> (Admission, Option<AdmissionRecord>) {
    let runtime = &pipeline.shared.runtime;
    let tool = runtime.registries.tools.get(&call.function.name);
    let review = Review {
        state,
        call,
        tool: tool.as_ref(),
        thread: pipeline.shared,
        hooks: pipeline.chain(HookKind::BeforeToolCall),
        guards: &runtime.governors.guards,
        schemas: &runtime.governors.schemas,
        limits: runtime.limits,
    };
    match event_hooks::unless_aborted(state, runtime.governors.admission.admit(&review)).await {
        Some((admission, record)) => {
            crate::spans::record_admission(|| record.to_line());
            (admission, Some(record))
        }
        None => (Admission::Refused(HookToolResult::error(ABORTED_TOOL_CALL)), None),
    }
}

/// The context for the model that a parked call carries (on its first reason, see `admit`).
pub(crate) fn approval_context(reasons: &[crate::approval_records::ApprovalReason]) -> Option<&str> {
    reasons.first().and_then(|reason| reason.context.as_deref())
}

/// A call that its process's death interrupted, found by recovery (G12): `tool_call_done`
/// marked `interrupted`, and the stored form of its result, an error marked
/// `tool_interrupted`, so a reader tells it from a failure without reading its text.
pub(crate) fn interrupted_message(shared: &super::ThreadShared, call: &HookToolCall) -> MessageRecord {
    let result = HookToolResult::error(INTERRUPTED_TOOL_CALL);
    shared.events.emit(ThreadEvent::ToolCallDone {
        id: call.id.clone(),
        name: call.function.name.clone(),
        status: result.status,
        denied: false,
        interrupted: true,
    });
    let mut message = tool_message(call, &result);
    message.extra.insert("tool_interrupted".into(), json!(true));
    message
}

/// The error result a denied call is answered with (G3): the model reads who denied it (a
/// hook or guard by its id, else a person) and why.
pub(crate) fn denial_result(hook: Option<&str>, reason: &str) -> HookToolResult {
    match hook {
        Some(hook) => HookToolResult::error(format!("the tool call was denied by `{hook}`: {reason}")),
        None => HookToolResult::error(format!("the tool call was denied: {reason}")),
    }
}

/// Runs a call through the whole tool pipeline and stores its result (T4-T6, M9, G3). Returns
/// the result as stored, and whether the call was denied.
pub(crate) async fn run_call(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    execution: Execution,
) -> HookToolResult {
    let span = tool_span(pipeline, call);
    async {
        let (admission, record) = admit(pipeline, state, call).await;
        let record = record.as_ref();
        match admission {
            // A call queued with `queue_tool` has no step to wait in: one that asks is denied.
            Admission::Ask { .. } => {
                let result =
                    denial_result(None, "it needs a person's approval, and a queued tool call cannot wait for one");
                finish_call(pipeline, state, call, result, CallEnd::Denied, record).await
            }
            admission => {
                let (result, end) = carry_out(pipeline, state, call, execution, admission).await;
                finish_call(pipeline, state, call, result, end, record).await
            }
        }
    }
    .instrument(span)
    .await
}

/// The `execute_tool` span of `call` (V1), with its arguments when the runtime records contents.
pub(crate) fn tool_span(pipeline: &Pipeline<'_>, call: &HookToolCall) -> tracing::Span {
    crate::spans::tool(call, &pipeline.shared.id, pipeline.shared.runtime.limits.trace_contents)
}

/// The tool result of an admitted call (not one that asks): refused, denied, or run, and how
/// it ended.
pub(crate) async fn carry_out(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    execution: Execution,
    admission: Admission,
) -> (HookToolResult, CallEnd) {
    match admission {
        Admission::Invalid(result) => (result, CallEnd::Invalid),
        Admission::Refused(result) => (result, CallEnd::Ran),
        Admission::Denied { hook, reason } => (denial_result(Some(&hook), &reason), CallEnd::Denied),
        Admission::Run { arguments, context } => {
            (execute(pipeline, state, call, execution, arguments, context.as_deref()).await, CallEnd::Ran)
        }
        Admission::Ask { arguments, reasons } => {
            (execute(pipeline, state, call, execution, Ok(arguments), approval_context(&reasons)).await, CallEnd::Ran)
        }
    }
}

/// Runs an admitted call: the listener, the tool (or subagent) with `arguments`, the listener;
/// `context`, from a settings file's PreToolUse hook, is added to the result.
pub(crate) async fn execute(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    execution: Execution,
    arguments: Result<Value, String>,
    context: Option<&str>,
) -> HookToolResult {
    let listener = pipeline.agent.listener();
    if let Some(listener) = &listener
        && panics::catch_future(listener.before_tool_call(&call.function.name)).await.is_err()
    {
        // E9: the listener's failure; the call goes on.
        listener_panicked(pipeline, "the tool-call listener's `before_tool_call`");
    }
    let started_at = Instant::now();
    let running = async {
        match execution {
            Execution::Subagent(relationship) => match &arguments {
                // The child reads the arguments as the gate left them.
                Ok(arguments) if parse_arguments(&call.function.arguments).ok().as_ref() != Some(arguments) => {
                    let rewritten =
                        HookToolCall::new(call.id.clone(), call.function.name.clone(), arguments.to_string());
                    super::children::run_as_tool(pipeline, state, relationship, &rewritten).await
                }
                _ => super::children::run_as_tool(pipeline, state, relationship, call).await,
            },
            Execution::Tool => call_tool(pipeline, state, call, arguments).await,
        }
    };
    let result = match state.execution.as_ref().map(|execution| execution.abort_signal.clone()) {
        // Abort drops the tool's future: the call is answered with an error result, so the
        // stored history keeps a result for every call.
        // Abort first: a call after the abort never starts.
        Some(abort) => tokio::select! {
            biased;
            () = model_step::aborted(&abort) => HookToolResult::error(ABORTED_TOOL_CALL),
            result = running => result,
        },
        None => running.await,
    };
    let mut result = result;
    if let Some(context) = context {
        event_hooks::add_context(&mut result, context);
    }
    // An aborted run leaves the result as it is rather than wait for these hooks.
    let _ = event_hooks::unless_aborted(state, event_hooks::after_tool_call(pipeline.shared, call, &mut result)).await;
    if let Some(listener) = &listener {
        let outcome = ToolCallOutcome {
            success: result.is_success(),
            latency: started_at.elapsed(),
            error: result.error.clone(),
        };
        if panics::catch_future(listener.after_tool_call(&call.function.name, &outcome)).await.is_err() {
            listener_panicked(pipeline, "the tool-call listener's `after_tool_call`");
        }
    }
    result
}

/// The error result given to a tool call that a stopped process left without one.
pub(crate) const INTERRUPTED_TOOL_CALL: &str =
    "the run was interrupted (its process stopped) before this tool call finished; it may or may not have run";

/// The error result of a tool call that the run's abort stopped (or kept from starting).
pub(crate) const ABORTED_TOOL_CALL: &str = "the tool call was aborted before it finished";

/// E9: a listener or authorizer that panicked is logged like a failed hook, by what it is and
/// the agent, never with the call's data.
#[cold]
fn listener_panicked(pipeline: &Pipeline<'_>, what: &str) {
    tracing::error!(
        target: "hooks_runtime::hook",
        thread = %pipeline.shared.id,
        "[Hooks] ✗ {what} of agent `{}` panicked; the panic is its own failure, the run goes on",
        pipeline.agent.def.name
    );
}

async fn call_tool(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    arguments: Result<Value, String>,
) -> HookToolResult {
    let Some(tool) = pipeline.shared.runtime.registries.tools.get(&call.function.name) else {
        return HookToolResult::error(format!("there is no tool named {}", call.function.name));
    };
    let arguments = match arguments {
        Ok(arguments) => arguments,
        Err(error) => {
            return HookToolResult::error(format!("the arguments of the tool call are not valid JSON: {error}"));
        }
    };
    // P4: a tool's progress reports are events of the call.
    let report = |progress: crate::tool::ToolProgress| {
        pipeline.shared.events.emit(ThreadEvent::ToolCallProgress {
            id: call.id.clone(),
            name: call.function.name.clone(),
            progress: progress.progress,
            total: progress.total,
            message: progress.message,
        });
    };
    let context = crate::tool::ToolCallContext::new(state, &call.id, &report);
    // A panicking tool is that call's error, not the thread's.
    match panics::catch_future(tool.call_with_context(context, arguments)).await {
        Ok(result) => result,
        Err(_) => HookToolResult::error(format!("the tool {} panicked", call.function.name)),
    }
}

/// T4-T6 and the tool message: [`complete_call`], then [`store_result`] (with the call's
/// decision record, when it was admitted).
pub(crate) async fn finish_call(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    result: HookToolResult,
    end: CallEnd,
    admission: Option<&AdmissionRecord>,
) -> HookToolResult {
    let result = complete_call(pipeline, state, call, result, end).await;
    store_result(pipeline, state, call, &result, end, admission).await;
    result
}

/// T4-T6: the result as the tool returned it goes to `tool_call_done`, then the
/// success/failure chain may replace it, then `before_store_tool_result`. A denied call (G3)
/// goes through them as a failed one; a call whose arguments the schema refused (G9) through
/// none of them (it has the event alone).
pub(crate) async fn complete_call(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    mut result: HookToolResult,
    end: CallEnd,
) -> HookToolResult {
    pipeline.shared.events.emit_with(|| ThreadEvent::ToolCallDone {
        id: call.id.clone(),
        name: call.function.name.clone(),
        status: result.status,
        denied: end.denied(),
        interrupted: end.interrupted(),
    });
    crate::spans::record_tool_result(&result, end.outcome(&result), pipeline.shared.runtime.limits.trace_contents);
    if end == CallEnd::Invalid {
        // G9: a call whose arguments the schema refused never ran; no tool hook sees it.
        return result;
    }
    if let Some(chain) = pipeline.chain(HookKind::ToolCallDone) {
        dispatch::await_point!(dispatch::tool_call_done(&chain, state, call, &result));
    }
    let kind = if result.is_success() { HookKind::AfterToolCallSuccess } else { HookKind::AfterToolCallFailure };
    if let Some(chain) = pipeline.chain(kind) {
        dispatch::await_point!(dispatch::after_tool_call(&chain, state, call, &mut result));
    }
    if let Some(chain) = pipeline.chain(HookKind::BeforeStoreToolResult) {
        let record = ToolCallRecord::from(call.clone());
        dispatch::await_point!(dispatch::before_store_tool_result(&chain, state, &record, &mut result));
    }
    result
}

/// The tool message, through the create pipeline (a write that goes on whatever the hooks do,
/// M9), with the call's decision record (G15), and the files the result carries.
pub(crate) async fn store_result(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    result: &HookToolResult,
    end: CallEnd,
    admission: Option<&AdmissionRecord>,
) {
    let mut message = tool_message(call, result);
    if let Some(record) = admission {
        message.extra.insert(crate::admission_record::MESSAGE_FIELD.into(), Value::String(record.to_text()));
    }
    match end {
        CallEnd::Denied => _ = message.extra.insert("tool_denied".into(), json!(true)),
        CallEnd::Interrupted => _ = message.extra.insert("tool_interrupted".into(), json!(true)),
        CallEnd::Ran | CallEnd::Invalid => {}
    }
    if let Err(error) = messages::create(pipeline, state, message, FailureRule::KeepLastGood).await {
        tracing::error!(target: "hooks_runtime::thread", thread = %pipeline.shared.id, "could not store a tool result: {}", error.into_hook_error().message());
    }
    store_generated_assets(pipeline, state, result).await;
}

/// The stored form of a tool result: its text as content, its status as `tool_status`, and
/// anything else it carries in extra fields.
pub(crate) fn tool_message(call: &HookToolCall, result: &HookToolResult) -> MessageRecord {
    let content = if result.is_success() { result.result.clone() } else { result.error.clone() };
    let mut record = MessageRecord::new(Role::Tool, content.unwrap_or_default());
    record.tool_call_id = Some(call.id.clone());
    record.name = Some(call.function.name.clone());
    record.extra.insert("tool_status".into(), json!(result.status.as_str()));
    if let Some(stack) = &result.stack {
        record.extra.insert("stack".into(), json!(stack));
    }
    if let Some(attachments) = &result.attachments {
        record.extra.insert("attachments".into(), serde_json::to_value(attachments).unwrap_or(Value::Null));
    }
    record
}

/// M10: a new file from a tool is kept in the thread's files and announced with a path
/// message; a hook may prevent the message, the file stays.
async fn store_generated_assets(pipeline: &Pipeline<'_>, state: &ThreadState, result: &HookToolResult) {
    let Some(attachments) = &result.attachments else { return };
    for attachment in attachments {
        let Attachment::New(file) = attachment else { continue };
        let path = format!("/attachments/{}", file.name);
        pipeline.shared.records.keep_file(path.clone(), file.data.clone());
        let mut message = MessageRecord::new(Role::User, format!("Generated file: {path}"));
        message.extra.insert("asset_path".into(), json!(path));
        if messages::create(pipeline, state, message, FailureRule::Prevent).await.is_err() {
            tracing::info!(target: "hooks_runtime::thread", thread = %pipeline.shared.id, "a hook prevented the generated-asset message; the file is kept");
        }
    }
}
