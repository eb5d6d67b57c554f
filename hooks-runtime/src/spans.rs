//! The runtime's spans of runs, model calls and tool calls, named and shaped as the
//! OpenTelemetry GenAI semantic conventions say (V1): `invoke_agent {agent}`, `chat {model}` and
//! `execute_tool {tool}`, with `gen_ai.*` fields. Hook spans (`dispatch::invoke`,
//! `governing::gate`) run inside them, so each hook's span is a child of the point that ran it.
//!
//! They are plain `tracing` spans, built only when a subscriber enables their target at INFO:
//! otherwise each costs one check of its callsite, and nothing is formatted or recorded. Feature
//! `otel` exports them over OTLP (`crate::otel`); a `fmt` subscriber prints them.
//!
//! Message contents, tool arguments and tool results go on them only when the application opts
//! in (`RuntimeBuilder::trace_contents`, V2), as the conventions' opt-in attributes
//! `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.tool.call.arguments` and
//! `gen_ai.tool.call.result`.

use hooks_core::{HookToolCall, HookToolResult, LlmMessage};
use serde_json::{Value, json};
use tracing::Span;
use tracing::field::Empty;

use crate::model::{FinishReason, Model, Usage};

/// The target of `invoke_agent` spans.
pub(crate) const AGENT_TARGET: &str = "hooks_runtime::agent";
/// The target of `chat` spans (and of the model clients' logs).
pub(crate) const MODEL_TARGET: &str = "hooks_runtime::model";
/// The target of `execute_tool` spans.
pub(crate) const TOOL_TARGET: &str = "hooks_runtime::tool";

/// The span of one run of the agent that `agent` names on thread `thread`
/// (`gen_ai.conversation.id`); `method` is the call that started it (`send`, `run_input`,
/// `resume_approvals`, ...). `agent` is called only when the span is wanted.
pub(crate) fn run(agent: impl FnOnce() -> &'static str, thread: &str, method: &'static str) -> Span {
    if !tracing::span_enabled!(target: AGENT_TARGET, tracing::Level::INFO) {
        return Span::none();
    }
    let agent = agent();
    tracing::info_span!(
        target: AGENT_TARGET,
        "invoke_agent",
        otel.name = format!("invoke_agent {agent}"),
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        gen_ai.conversation.id = thread,
        hooks.run.method = method,
        hooks.run.status = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// Records how the current run ended on its `invoke_agent` span, when it is in one: the
/// thread's status (a failed run's reason as `error.type`) and the tokens of its model calls.
pub(crate) fn record_run_end(status: &crate::events::ThreadStatus, usage: Option<Usage>) {
    if !tracing::span_enabled!(target: AGENT_TARGET, tracing::Level::INFO) {
        return;
    }
    let span = Span::current();
    if span.metadata().is_none_or(|metadata| metadata.name() != "invoke_agent") {
        return;
    }
    span.record("hooks.run.status", status.as_str());
    if let Some(usage) = usage {
        record_usage(&span, usage);
    }
    if let crate::events::ThreadStatus::Failed(reason) = status {
        record_error(&span, reason.as_str());
    }
}

/// The span of model step `step` of thread `thread`: one `chat` call of `model` for the prompt's
/// model name `requested`. It is named by the model id the request carries
/// ([`Model::request_model`]: the endpoint's id, not the prompt's alias), as the conventions'
/// `gen_ai.request.model`, with the provider when the model knows it; the stream records
/// `gen_ai.response.model` when the response names its model. With `contents`, the request's
/// messages go on it as `gen_ai.input.messages`.
pub(crate) fn chat(
    model: &dyn Model,
    requested: &str,
    step: u32,
    thread: &str,
    contents: Option<&[LlmMessage]>,
) -> Span {
    if !tracing::span_enabled!(target: MODEL_TARGET, tracing::Level::INFO) {
        return Span::none();
    }
    let request_model = model.request_model(requested);
    let span = tracing::info_span!(
        target: MODEL_TARGET,
        "chat",
        otel.name = format!("chat {request_model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = request_model,
        gen_ai.response.model = Empty,
        gen_ai.provider.name = model.provider_name(),
        hooks.model = requested,
        gen_ai.conversation.id = thread,
        hooks.step = i64::from(step),
        finish_reason = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    if let Some(messages) = contents
        && !span.is_disabled()
    {
        let messages: Vec<Value> = messages.iter().map(input_message).collect();
        span.record("gen_ai.input.messages", Value::Array(messages).to_string());
    }
    span
}

/// Records a model call's response on its `chat` span: the finish reason (also as the
/// conventions' `gen_ai.response.finish_reasons` array, with feature `otel`), the tokens, and
/// with `contents` the reply as `gen_ai.output.messages`.
pub(crate) fn record_response(
    span: &Span,
    finish_reason: &FinishReason,
    usage: Option<Usage>,
    output: Option<(&str, &[HookToolCall])>,
) {
    if span.is_disabled() {
        return;
    }
    span.record("finish_reason", finish_reason.as_str());
    #[cfg(feature = "otel")]
    crate::otel::set_string_array(span, "gen_ai.response.finish_reasons", &[finish_reason.as_str()]);
    if let Some(usage) = usage {
        record_usage(span, usage);
    }
    if let Some((text, calls)) = output {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({ "type": "text", "content": text }));
        }
        for call in calls {
            parts.push(tool_call_part(&call.id, &call.function.name, &call.function.arguments));
        }
        let message = json!([{ "role": "assistant", "parts": parts, "finish_reason": finish_reason.as_str() }]);
        span.record("gen_ai.output.messages", message.to_string());
    }
}

/// Records a model call that failed (`kind`: `model_error`, `panicked`, `aborted`) on its span.
pub(crate) fn record_chat_error(span: &Span, kind: &'static str) {
    if span.is_disabled() {
        return;
    }
    record_error(span, kind);
}

/// The span of tool call `call` on thread `thread`, from its governing to its stored result: the
/// hooks that govern it and the ones that see its result run inside it. With `contents`, its
/// arguments go on it as `gen_ai.tool.call.arguments`.
pub(crate) fn tool(call: &HookToolCall, thread: &str, contents: bool) -> Span {
    let span = tracing::info_span!(
        target: TOOL_TARGET,
        "execute_tool",
        otel.name = format!("execute_tool {}", call.function.name),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = call.function.name.as_str(),
        gen_ai.tool.call.id = call.id.as_str(),
        gen_ai.tool.type = "function",
        gen_ai.conversation.id = thread,
        hooks.tool.outcome = Empty,
        hooks.tool.admission = Empty,
        gen_ai.tool.call.arguments = Empty,
        gen_ai.tool.call.result = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    if contents && !span.is_disabled() {
        span.record("gen_ai.tool.call.arguments", call.function.arguments.as_str());
    }
    span
}

/// Records a tool call's result on the current `execute_tool` span, when it is in one:
/// `outcome` (`success`, `error`, `denied`, `interrupted`, `invalid`), as `error.type` when it is
/// not a success, and with `contents` the result the model reads.
pub(crate) fn record_tool_result(result: &HookToolResult, outcome: &'static str, contents: bool) {
    if !tracing::span_enabled!(target: TOOL_TARGET, tracing::Level::INFO) {
        return;
    }
    let span = Span::current();
    if span.metadata().is_none_or(|metadata| metadata.name() != "execute_tool") {
        return;
    }
    span.record("hooks.tool.outcome", outcome);
    if outcome != "success" {
        record_error(&span, outcome);
    }
    if contents {
        let text = result.result.as_deref().or(result.error.as_deref()).unwrap_or_default();
        span.record("gen_ai.tool.call.result", text);
    }
}

/// Records on the current `execute_tool` span its call's decision record (G15), as the JSON
/// array of its entries: each decider's answer with the arguments' hashes, never the arguments
/// nor the reasons (which may quote them; the stored record has them).
pub(crate) fn record_admission(record: impl FnOnce() -> String) {
    if !tracing::span_enabled!(target: TOOL_TARGET, tracing::Level::INFO) {
        return;
    }
    let span = Span::current();
    if span.metadata().is_some_and(|metadata| metadata.name() == "execute_tool") {
        span.record("hooks.tool.admission", record().as_str());
    }
}

/// Records on the current `execute_tool` span that its call waits for a person's approval.
pub(crate) fn record_tool_waiting() {
    if !tracing::span_enabled!(target: TOOL_TARGET, tracing::Level::INFO) {
        return;
    }
    let span = Span::current();
    if span.metadata().is_some_and(|metadata| metadata.name() == "execute_tool") {
        span.record("hooks.tool.outcome", "awaiting_approval");
    }
}

/// Records the tokens of a run or a model call, on an `invoke_agent` or `chat` span.
fn record_usage(span: &Span, usage: Usage) {
    span.record("gen_ai.usage.input_tokens", count(usage.prompt_tokens));
    span.record("gen_ai.usage.output_tokens", count(usage.completion_tokens));
}

/// Records a failure as the conventions want it on every span of theirs: its kind as
/// `error.type`, and the span's status as an error.
fn record_error(span: &Span, kind: &str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

/// A count as a signed integer: OpenTelemetry's integer attributes are `i64`, and
/// `tracing-opentelemetry` exports a `u64` field as text.
fn count(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A request message as the conventions' `gen_ai.input.messages` shape it: a role and parts.
fn input_message(message: &LlmMessage) -> Value {
    let mut parts = Vec::new();
    match (&message.tool_call_id, &message.content) {
        (Some(id), content) => {
            parts.push(json!({ "type": "tool_call_response", "id": id, "response": content }));
        }
        (None, Some(content)) if !content.is_empty() => parts.push(json!({ "type": "text", "content": content })),
        (None, _) => {}
    }
    if let Some(Value::Array(calls)) = &message.tool_calls {
        for call in calls {
            let function = &call["function"];
            parts.push(tool_call_part(
                call["id"].as_str().unwrap_or_default(),
                function["name"].as_str().unwrap_or_default(),
                function["arguments"].as_str().unwrap_or_default(),
            ));
        }
    }
    json!({ "role": message.role, "parts": parts })
}

/// A tool call as a message part; its arguments as JSON when they parse, else as their text.
fn tool_call_part(id: &str, name: &str, arguments: &str) -> Value {
    let arguments = serde_json::from_str::<Value>(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()));
    json!({ "type": "tool_call", "id": id, "name": name, "arguments": arguments })
}
