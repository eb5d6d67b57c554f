//! A model response as it streams (T1-T3, T7): its text, its tool calls, and
//! `tool_call_started` with its event once per call, at the moment T2 or T3 says.

use std::collections::HashMap;

use hooks_core::{AbortSignal, HookKind, HookToolCall, ThreadState};
use serde_json::Value;

use super::model_step::{self, Caps, StepError};
use super::pipeline::Pipeline;
use crate::dispatch;
use crate::events::ThreadEvent;
use crate::json_progress::ProgressScanner;
use crate::model::{FinishReason, ModelError, ModelEvent, ModelStream, Usage};

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
        dispatch::await_point_boxed!(dispatch::tool_call_started(&chain, state, call, progress));
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
