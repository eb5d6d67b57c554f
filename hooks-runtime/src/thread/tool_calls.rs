//! Tool calls (T1-T7): `tool_call_started` while the response streams, the tool, then
//! `tool_call_done`, `after_tool_call_success|failure`, `before_store_tool_result`, and the
//! tool message through the create pipeline. Events go to subscribers whether or not hooks are
//! selected.

use std::collections::HashMap;
use std::time::Instant;

use hooks_core::{
    AbortSignal, Attachment, HookKind, HookToolCall, HookToolResult, MessageRecord, Role, ThreadState, ToolCallRecord,
    ToolDecision,
};
use serde_json::{Value, json};
use tracing::Instrument as _;

use super::messages;
use super::model_step::{self, Caps, StepError};
use super::pipeline::Pipeline;
use super::settings_hooks;
use crate::approval_records::ApprovalReason;
use crate::dispatch::{self, FailureRule, panics};
use crate::events::ThreadEvent;
use crate::governing::caps::cap_hook_reason;
use crate::governing::gate::Verdict;
use crate::json_progress::ProgressScanner;
use crate::model::{FinishReason, ModelError, ModelEvent, ModelStream, Usage};
use crate::tool::ToolCallOutcome;

/// A tool call as it streams.
struct StreamingCall {
    /// The call's index in the model's events.
    index: usize,
    call: HookToolCall,
    scanner: Option<ProgressScanner>,
    started: bool,
}

/// A complete model response.
pub(crate) struct Response {
    pub(crate) text: String,
    pub(crate) calls: Vec<HookToolCall>,
    /// Why the reply ended; when the model did not say, `tool_calls` if it called tools and
    /// `stop` otherwise.
    pub(crate) finish_reason: FinishReason,
    /// The tokens the response used, if the model reported them (its last report).
    pub(crate) usage: Option<Usage>,
}

/// Reads the stream to its end, running `tool_call_started` once per call at the moment T2 or T3
/// says: at the call's first appearance, or when its progress argument has streamed. Each wait
/// for the next event ends early when `abort` fires or the model panics; the runtime's size
/// caps apply to the reply text and the tool-call arguments.
pub(crate) async fn consume_stream(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    stream: &mut dyn ModelStream,
    abort: &AbortSignal,
) -> Result<Response, StepError> {
    let runtime = &pipeline.shared.runtime;
    let mut caps = Caps::new(runtime.limits.max_reply_bytes, runtime.limits.max_tool_argument_bytes);
    let mut text = String::new();
    let mut calls: Vec<StreamingCall> = Vec::new();
    // Each call's place in `calls` by its event index, so a fragment finds its call at once,
    // however many calls the response has. A call whose index is its place (0, 1, 2, ..., as
    // providers number them) is found there and needs no entry.
    let mut slots: HashMap<usize, usize> = HashMap::new();
    let slot_of = |slots: &HashMap<usize, usize>, calls: &[StreamingCall], index: usize| {
        slots.get(&index).copied().or_else(|| calls.get(index).filter(|call| call.index == index).map(|_| index))
    };
    let mut finish_reason = None;
    let mut usage = None;
    let step = state.execution.as_ref().map_or(0, |execution| execution.step_count);
    while let Some(event) = model_step::guarded(abort, stream.next_event()).await? {
        match event? {
            ModelEvent::TextDelta(delta) => {
                caps.add_reply_text(&delta)?;
                pipeline.shared.events.emit_delta(step, &delta);
                // The first piece becomes the reply's text as it is: a reply in one piece is
                // never copied.
                if text.is_empty() {
                    text = delta;
                } else {
                    text.push_str(&delta);
                }
            }
            ModelEvent::Finished(reason) => finish_reason = Some(reason),
            ModelEvent::Usage(reported) => usage = Some(reported),
            ModelEvent::ToolCallStart { index, id, name } => {
                let scanner = pipeline
                    .shared
                    .runtime
                    .registries
                    .tools
                    .get(&name)
                    .and_then(|tool| tool.progress_argument().map(ProgressScanner::new));
                let mut streaming =
                    StreamingCall { index, call: HookToolCall::new(id, name, ""), scanner, started: false };
                if streaming.scanner.is_none() {
                    // T2: the name is known; the arguments may be empty or incomplete.
                    started(pipeline, state, &streaming.call, None).await;
                    streaming.started = true;
                }
                // A second start of one index is no new place for it: its fragments go to the first.
                if index != calls.len() && slot_of(&slots, &calls, index).is_none() {
                    slots.insert(index, calls.len());
                }
                calls.push(streaming);
            }
            ModelEvent::ToolCallArguments { index, fragment } => {
                let Some(streaming) = slot_of(&slots, &calls, index).map(|slot| &mut calls[slot]) else {
                    return Err(
                        ModelError::Malformed(format!("arguments for tool call {index}, which never started")).into()
                    );
                };
                caps.add_tool_arguments(&fragment)?;
                // As the reply's text: arguments in one fragment are never copied.
                let arguments = &mut streaming.call.function.arguments;
                let start = arguments.len();
                if start == 0 {
                    *arguments = fragment;
                } else {
                    arguments.push_str(&fragment);
                }
                let fragment = &streaming.call.function.arguments[start..];
                let progress = streaming
                    .scanner
                    .as_mut()
                    .filter(|scanner| !scanner.is_done())
                    .and_then(|scanner| scanner.feed(fragment));
                if let Some(progress) = progress
                    && !streaming.started
                {
                    // T3: just the progress argument has finished streaming.
                    streaming.started = true;
                    started(pipeline, state, &streaming.call, Some(&progress)).await;
                }
            }
            ModelEvent::ToolCallEnd { .. } => {}
        }
    }
    let finish_reason =
        finish_reason.unwrap_or(if calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls });
    for streaming in calls.iter_mut().filter(|call| !call.started) {
        // T3: the progress argument never came; after the response, progress None.
        streaming.started = true;
        started(pipeline, state, &streaming.call, None).await;
    }
    Ok(Response { text, calls: calls.into_iter().map(|streaming| streaming.call).collect(), finish_reason, usage })
}

/// T1, T7: the event and the hooks, at the same moment.
async fn started(pipeline: &Pipeline<'_>, state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    pipeline.shared.events.emit_with(|| ThreadEvent::ToolCallStarted {
        id: call.id.clone(),
        name: call.function.name.clone(),
        progress: progress.map(str::to_owned),
    });
    if let Some(chain) = pipeline.chain(HookKind::ToolCallStarted) {
        dispatch::await_point!(dispatch::tool_call_started(&chain, state, call, progress));
    }
}

/// T1, T3, T7 for a call that did not stream (queued with `queue_tool`): `tool_call_started`
/// and its event run once, before the tool, with the progress argument read from the complete
/// arguments when the tool declares one.
pub(crate) async fn started_queued(pipeline: &Pipeline<'_>, state: &ThreadState, call: &HookToolCall) {
    let progress = pipeline.shared.runtime.registries.tools.get(&call.function.name).and_then(|tool| {
        let argument = tool.progress_argument()?;
        let arguments: Value = serde_json::from_str(&call.function.arguments).ok()?;
        arguments.get(argument)?.as_str().map(str::to_owned)
    });
    started(pipeline, state, call, progress.as_deref()).await;
}

/// How a tool call is carried out: a tool, a handoff, or a subagent relationship.
pub(crate) enum Execution {
    /// A tool of the runtime (or an unknown name, which fails).
    Tool,
    /// A subagent relationship offered as a tool; the result is the child's reply.
    Subagent(&'static str),
}

/// What the checks before a tool decided about one call: the schema (G9), `authorize_tools`,
/// then the gate (G2).
pub(crate) enum Admission {
    /// Its arguments fail the tool's schema (G9): this error result, and nothing else runs for
    /// it (no decider, listener, tool or tool hook).
    Invalid(HookToolResult),
    /// The run was aborted before it was governed: this error result, no decider, no listener,
    /// no tool.
    Refused(HookToolResult),
    /// `authorize_tools` (Y5, by the name [`AUTHORIZER`]) or the gate (G3) denied it.
    Denied {
        /// The deciding hook or guard.
        hook: String,
        /// Why.
        reason: String,
    },
    /// It runs, with these arguments (or the parser's message for text that is not JSON).
    Run {
        /// The arguments as the settings hooks and the gate left them.
        arguments: Result<Value, String>,
        /// Context for the model from a settings file's PreToolUse hook, added to the result.
        context: Option<String>,
    },
    /// It waits for a person (A1).
    Ask {
        /// Who asked and why.
        reasons: Vec<ApprovalReason>,
        /// The arguments as the hooks left them.
        arguments: Value,
    },
}

/// The schema check of the model's arguments (G9), `authorize_tools` and the gate for one call
/// whose arguments have fully streamed.
pub(crate) async fn admit(pipeline: &Pipeline<'_>, state: &ThreadState, call: &HookToolCall) -> Admission {
    let runtime = &pipeline.shared.runtime;
    let arguments = crate::governing::gate::parse_arguments(&call.function.arguments);
    // G9: arguments the tool's schema refuses reach no decider and no tool; the model reads
    // where they are wrong (never their values) and may call again in its next step.
    if let Ok(parsed) = &arguments
        && let Err(violation) =
            runtime.governors.schemas.check(runtime.registries.tools.get(&call.function.name).as_ref(), parsed)
    {
        return Admission::Invalid(HookToolResult::error(format!(
            "the tool call {} was not run: {violation}; call it again with arguments that satisfy it",
            call.function.name
        )));
    }
    // G11: the authorizer answers in the type every decider answers with; its ask joins the
    // others' (G4).
    let mut authorizer_asked = None;
    if let Some(authorize) = &runtime.registries.authorizer {
        // E9: an authorizer that panics has not authorized the call.
        let decision = panics::catch(|| authorize(state, call)).unwrap_or_else(|_| {
            listener_panicked(pipeline, "the tool authorizer (`authorize_tools`)");
            ToolDecision::deny(format!("the authorizer panicked, so the call {} is not authorized", call.function.name))
        });
        match decision {
            // Y5: a denied call never reaches the gate, the tool or the listener.
            ToolDecision::Deny { reason } => {
                return Admission::Denied { hook: AUTHORIZER.to_owned(), reason: cap_hook_reason(AUTHORIZER, reason) };
            }
            ToolDecision::Ask { reason } => authorizer_asked = Some(ApprovalReason::new(Some(AUTHORIZER), reason)),
            _ => {}
        }
    }
    // PreToolUse of a settings file: may deny the call (the gate is not asked), ask, or rewrite
    // its arguments, which the gate then governs.
    let settings =
        match settings_hooks::unless_aborted(state, settings_hooks::govern_tool_call(pipeline, state, call)).await {
            Some(Ok(governed)) => governed,
            Some(Err(denial)) => {
                let reason = cap_hook_reason(&denial.hook, denial.reason);
                return Admission::Denied { hook: denial.hook, reason };
            }
            None => return Admission::Refused(HookToolResult::error(ABORTED_TOOL_CALL)),
        };
    let settings_hooks::Governed { rewritten, context, asked, pre_approved } = settings;
    let arguments = match &rewritten {
        // A settings hook's rewrite was checked against the schema where it was made (G5).
        Some(rewritten) => crate::governing::gate::parse_arguments(&rewritten.function.arguments),
        None => arguments,
    };
    let call = rewritten.as_ref().unwrap_or(call);
    let chain = pipeline.chain(HookKind::BeforeToolCall);
    let tool = runtime.registries.tools.get(&call.function.name);
    let governed = crate::governing::gate::govern(runtime.gate(), tool, chain, state, call, arguments).await;
    // G4 across both: a gate deny wins; any ask, from either, makes one approval.
    let mut reasons: Vec<ApprovalReason> = authorizer_asked.into_iter().chain(asked).collect();
    match (governed.verdict, governed.arguments) {
        (Verdict::Deny { hook, reason }, _) => {
            let reason = cap_hook_reason(&hook, reason);
            Admission::Denied { hook, reason }
        }
        // Only parsed arguments are governed.
        (_, Err(error)) => Admission::Run { arguments: Err(error), context },
        (verdict, Ok(arguments)) => {
            if let Verdict::Ask(more) = verdict {
                // A settings file's allow rule stands in for the tool's own approval only.
                reasons.extend(more.into_iter().filter(|reason| !(pre_approved && reason.hook.is_none())));
            }
            for reason in &mut reasons {
                let hook = reason.hook.as_deref().unwrap_or("the tool");
                reason.reason = cap_hook_reason(hook, std::mem::take(&mut reason.reason));
            }
            match reasons.first_mut() {
                None => Admission::Run { arguments: Ok(arguments), context },
                Some(first) => {
                    // The parked call keeps the context for the model, for when it is approved.
                    first.context = context.clone();
                    // K11: a PermissionRequest hook may decide the approval at once.
                    match settings_hooks::permission_request(pipeline, call, &arguments, &reasons).await {
                        Some(settings_hooks::PermissionAnswer::Allow { hook, arguments }) => {
                            pipeline.shared.events.emit(crate::events::ThreadEvent::Custom {
                                event: "settings_hook_approval".to_owned(),
                                data: serde_json::json!({"hook": hook, "call": call.id, "decision": "approved"}),
                            });
                            Admission::Run { arguments: Ok(arguments), context }
                        }
                        Some(settings_hooks::PermissionAnswer::Deny(denial)) => {
                            pipeline.shared.events.emit(crate::events::ThreadEvent::Custom {
                                event: "settings_hook_approval".to_owned(),
                                data: serde_json::json!({"hook": denial.hook, "call": call.id, "decision": "denied"}),
                            });
                            Admission::Denied { hook: denial.hook, reason: denial.reason }
                        }
                        None => Admission::Ask { reasons, arguments },
                    }
                }
            }
        }
    }
}

/// The name a decision of `authorize_tools` is recorded under, as a hook's id would be.
pub(crate) const AUTHORIZER: &str = "authorize_tools";

/// The context for the model that a parked call carries (on its first reason, see `admit`).
pub(crate) fn approval_context(reasons: &[crate::approval_records::ApprovalReason]) -> Option<&str> {
    reasons.first().and_then(|reason| reason.context.as_deref())
}

/// How a call ended, apart from its result's status: the stored result, the kept result of a
/// parked call and `tool_call_done` say which (G3, G12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallEnd {
    /// It ran (or failed to, or was refused before any decider): its result is the tool's.
    Ran,
    /// A decider denied it (G3).
    Denied,
    /// Its process died while it ran, or before its result was kept (G12).
    Interrupted,
    /// Its arguments failed the tool's schema (G9): no decider, tool or tool hook ran for it.
    Invalid,
}

impl CallEnd {
    pub(crate) fn denied(self) -> bool {
        self == CallEnd::Denied
    }

    pub(crate) fn interrupted(self) -> bool {
        self == CallEnd::Interrupted
    }

    /// The call's outcome in a word, for its span: `success`, `error`, `denied`, `interrupted`
    /// or `invalid`.
    pub(crate) fn outcome(self, result: &HookToolResult) -> &'static str {
        match self {
            CallEnd::Ran if result.is_success() => "success",
            CallEnd::Ran => "error",
            CallEnd::Denied => "denied",
            CallEnd::Interrupted => "interrupted",
            CallEnd::Invalid => "invalid",
        }
    }
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
        match admit(pipeline, state, call).await {
            // A call queued with `queue_tool` has no step to wait in: one that asks is denied.
            Admission::Ask { .. } => {
                let result =
                    denial_result(None, "it needs a person's approval, and a queued tool call cannot wait for one");
                finish_call(pipeline, state, call, result, CallEnd::Denied).await
            }
            admission => {
                let (result, end) = carry_out(pipeline, state, call, execution, admission).await;
                finish_call(pipeline, state, call, result, end).await
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
                Ok(arguments)
                    if crate::governing::gate::parse_arguments(&call.function.arguments).ok().as_ref()
                        != Some(arguments) =>
                {
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
        settings_hooks::add_context(&mut result, context);
    }
    // An aborted run leaves the result as it is rather than wait for these hooks.
    let _ = settings_hooks::unless_aborted(state, settings_hooks::after_tool_call(pipeline, call, &mut result)).await;
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

/// T4-T6 and the tool message: [`complete_call`], then [`store_result`].
pub(crate) async fn finish_call(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    result: HookToolResult,
    end: CallEnd,
) -> HookToolResult {
    let result = complete_call(pipeline, state, call, result, end).await;
    store_result(pipeline, state, call, &result, end).await;
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
/// M9), and the files the result carries.
pub(crate) async fn store_result(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    result: &HookToolResult,
    end: CallEnd,
) {
    let mut message = tool_message(call, result);
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
