//! One model step of a turn: the context is assembled, the model streams its response, and the
//! step's message is written, whichever way the step ended.

use hooks_core::{AbortSignal, HookError, HookToolCall, MessageRecord, PromptDef, Role, ThreadState};
use serde_json::json;
use tracing::Instrument as _;

use super::agents::tool_specs;
use super::context;
use super::messages;
use super::model_step::{self, StepError};
use super::pipeline::Pipeline;
use super::stored_calls::stored_tool_calls;
use super::tool_stream::{self, Response};
use super::{RunOutcome, RuntimeError, TurnEnd};
use crate::dispatch::FailureRule;
use crate::model::{ModelError, ModelRequest};
use crate::reasons::{FailReason, StopReason};
use crate::run_error::{RunError, RunErrorKind};

/// The model's complete response to the context of `prompt`, or how the turn ends without one
/// (its message already written).
pub(crate) async fn respond(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    prompt: &'static PromptDef,
    abort: &AbortSignal,
    outcome: &mut RunOutcome,
) -> Result<Result<Response, TurnEnd>, RuntimeError> {
    let history = match context::assemble(pipeline, state, prompt).await? {
        Ok(history) => history,
        Err(blocked) => {
            // Boxed, as the failed steps' writes below: rare paths, kept out of the step's future.
            Box::pin(store_blocked(pipeline, state, &blocked)).await;
            return Ok(Err(TurnEnd::Stopped(StopReason::HookBlocked)));
        }
    };
    let mut request = ModelRequest::new(prompt.model, history, tool_specs(pipeline, prompt).await);
    // A model that waits (to retry, say) gives up when the run is aborted.
    request.abort = state.execution.as_ref().map(|execution| execution.abort_signal.clone());
    let Some(model) = pipeline.shared.runtime.registries.models.get(prompt.model) else {
        return Ok(Err(TurnEnd::Failed(FailReason::UnknownModel)));
    };
    let contents = pipeline.shared.runtime.limits.trace_contents.then_some(request.messages.as_slice());
    let span = crate::spans::chat(model.as_ref(), prompt.model, outcome.steps, &pipeline.shared.id, contents);
    let response = async {
        match model_step::guarded(abort, model.stream(request)).await {
            Ok(Ok(mut stream)) => tool_stream::consume_stream(pipeline, state, stream.as_mut(), abort).await,
            Ok(Err(error)) => Err(StepError::Model(error)),
            Err(step) => Err(step),
        }
    }
    .instrument(span.clone())
    .await;
    let thread = &pipeline.shared.id;
    match response {
        Ok(response) => {
            let output = pipeline.shared.runtime.limits.trace_contents.then_some((&*response.text, &*response.calls));
            crate::spans::record_response(&span, &response.finish_reason, response.usage, output);
            Ok(Ok(response))
        }
        // What the step streamed so far is dropped: only complete messages are kept.
        Err(StepError::Aborted | StepError::Model(ModelError::Cancelled)) => {
            crate::spans::record_chat_error(&span, "aborted");
            Ok(Err(TurnEnd::Stopped(StopReason::Aborted)))
        }
        Err(StepError::Panicked(location)) => {
            crate::spans::record_chat_error(&span, "panicked");
            tracing::error!(target: "hooks_runtime::thread", thread = %thread, "[Hooks] ✗ the model `{}` {location}; the run fails (panicked)", prompt.model);
            let error = format!("the model `{}` panicked", prompt.model);
            Box::pin(store_failed_step(pipeline, state, &error)).await;
            outcome.error = Some(RunError::new(RunErrorKind::ModelPanicked, error));
            Ok(Err(TurnEnd::Failed(FailReason::Panicked)))
        }
        Err(StepError::Model(error)) => {
            // M9: the failed status of a model step is written whatever the hooks do.
            crate::spans::record_chat_error(&span, "model_error");
            tracing::warn!(target: "hooks_runtime::thread", thread = %thread, "model step failed: {error}");
            Box::pin(store_failed_step(pipeline, state, &error.to_string())).await;
            outcome.error = Some(RunError::from(error));
            Ok(Err(TurnEnd::Failed(FailReason::ModelError)))
        }
    }
}

/// R7: the gate's message is stored as an assistant message, the provider request does not
/// run.
async fn store_blocked(pipeline: &Pipeline<'_>, state: &ThreadState, blocked: &HookError) {
    let mut message = MessageRecord::new(Role::Assistant, blocked.message());
    message.extra.insert("hook_blocked".into(), json!(true));
    let _ = messages::create(pipeline, state, message, FailureRule::KeepLastGood).await;
}

/// A step that failed (`error`) is written as an assistant message with status `failed`.
async fn store_failed_step(pipeline: &Pipeline<'_>, state: &ThreadState, error: &str) {
    let mut message = MessageRecord::new(Role::Assistant, "");
    message.content = None;
    message.extra.insert("status".into(), json!("failed"));
    message.extra.insert("error".into(), json!(error));
    let _ = messages::create(pipeline, state, message, FailureRule::KeepLastGood).await;
}

/// M9: the model step's message is written whatever the hooks do; `outcome` takes its usage,
/// finish reason and reply (when the step has text). Returns the step's tool calls.
pub(crate) async fn store_reply(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    response: Response,
    outcome: &mut RunOutcome,
) -> Vec<HookToolCall> {
    let Response { text, calls, finish_reason, usage } = response;
    let mut message = MessageRecord::new(Role::Assistant, "");
    message.content = (!text.is_empty()).then(|| text.clone());
    message.extra.insert("finish_reason".into(), json!(finish_reason));
    if let Some(usage) = usage {
        message.extra.insert("usage".into(), json!(usage));
        *outcome.usage.get_or_insert_default() += usage;
    }
    outcome.finish_reason = Some(finish_reason);
    if !calls.is_empty() {
        let text = stored_tool_calls(&calls);
        pipeline.shared.last_calls.keep(&text, &calls);
        message.tool_calls = Some(text);
    }
    let _ = messages::create(pipeline, state, message, FailureRule::KeepLastGood).await;
    if !text.is_empty() {
        outcome.reply = Some(text);
    }
    calls
}
