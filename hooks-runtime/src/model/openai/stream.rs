//! The response stream: chat-completion chunks, as the event stream carries them, turned into
//! [`ModelEvent`]s. Every rule about what a chunk means, and every `Malformed` it can raise, is here.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

use super::limits::{Caps, Deadline, Waiting};
use super::provider_errors::{self, transport_error};
use super::sse::SseParser;
use crate::model::{FinishReason, ModelError, ModelEvent, ModelStream, ProviderError, Usage};

/// The message for a body that stopped before `[DONE]` or a `finish_reason`.
pub(super) const ENDED_EARLY: &str = "stream ended before the response was complete";

/// A streamed chat completion over HTTP.
pub(super) struct OpenAiStream {
    /// The body being read; dropped, closing the connection, as soon as the stream ends or fails.
    response: Option<reqwest::Response>,
    deadline: Deadline,
    parser: SseParser,
    decoder: DeltaDecoder,
    pending: VecDeque<ModelEvent>,
    /// An error to report once the events decoded before it are out.
    failed: Option<ModelError>,
    finished: bool,
}

impl OpenAiStream {
    pub(super) fn new(response: reqwest::Response, deadline: Deadline, caps: Caps) -> Self {
        OpenAiStream {
            response: Some(response),
            deadline,
            parser: SseParser::default(),
            decoder: DeltaDecoder::new(caps),
            pending: VecDeque::new(),
            failed: None,
            finished: false,
        }
    }

    /// One step: decodes the next event already received, or reads the next piece of the body.
    async fn advance(&mut self) -> Result<(), ModelError> {
        if let Some(data) = self.parser.next_event().map_err(|error| ModelError::Malformed(error.0))? {
            self.finished = self.decoder.decode(&data, &mut self.pending)? == Flow::Done;
            return Ok(());
        }
        let Some(response) = self.response.as_mut() else {
            return Err(ModelError::Other("the response stream was read after it ended".to_owned()));
        };
        let chunk = self.deadline.wait(Waiting::Body, response.chunk()).await?;
        match chunk.map_err(transport_error)? {
            Some(bytes) => self.parser.push(&bytes),
            None => {
                while let Some(data) =
                    self.parser.next_event_at_end().map_err(|error| ModelError::Malformed(error.0))?
                {
                    if self.decoder.decode(&data, &mut self.pending)? == Flow::Done {
                        break;
                    }
                }
                self.decoder.finish(&mut self.pending)?;
                self.finished = true;
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl ModelStream for OpenAiStream {
    async fn next_event(&mut self) -> Option<Result<ModelEvent, ModelError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if let Some(error) = self.failed.take() {
                self.finished = true;
                return Some(Err(error));
            }
            if self.finished {
                self.response = None;
                return None;
            }
            if let Err(error) = self.advance().await {
                // Abandoned here: nothing more of the body is read or kept.
                self.response = None;
                self.failed = Some(error);
            }
        }
    }
}

/// Whether the response goes on after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    Continue,
    /// `data: [DONE]`: nothing more to read.
    Done,
}

/// One tool call as its deltas build it up.
#[derive(Debug, Default)]
struct ToolCall {
    id: Option<String>,
    name: Option<String>,
    /// Argument fragments received before the call could start (its name came late).
    held_back: Vec<String>,
    started: bool,
    ended: bool,
}

/// Turns chat-completion chunks into events, holding a tool call back until its id and name are
/// known and ending every call when the response finishes.
///
/// Every delta finds its call in constant time, so a response with many calls costs time in
/// proportion to its size.
#[derive(Debug, Default)]
pub(super) struct DeltaDecoder {
    /// The calls, by their position in the response (the events' `index`).
    calls: Vec<ToolCall>,
    /// The position of each call that came with a provider `index`.
    by_provider_index: HashMap<u64, usize>,
    /// The calls before this position have all ended.
    ended_up_to: usize,
    /// The call the last delta went to, for providers that leave out `index`.
    last_call: Option<usize>,
    /// A `finish_reason` or `[DONE]` arrived.
    complete: bool,
    /// A `finish_reason` arrived and was passed on (only the first one is).
    finish_reported: bool,
    /// The response's `model` was recorded on the current span (the first chunk's is).
    model_recorded: bool,
    /// How much text and how many argument bytes the response may hold, and has held.
    caps: Caps,
}

impl DeltaDecoder {
    pub(super) fn new(caps: Caps) -> Self {
        DeltaDecoder { caps, ..DeltaDecoder::default() }
    }

    /// Decodes the data of one event into `out`.
    pub(super) fn decode(&mut self, data: &str, out: &mut VecDeque<ModelEvent>) -> Result<Flow, ModelError> {
        if data.trim() == "[DONE]" {
            self.complete = true;
            self.end_calls(out)?;
            return Ok(Flow::Done);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            malformed(format!("expected a JSON chat-completion chunk or `[DONE]` in a `data:` line ({error})"))
        })?;
        let Some(chunk) = chunk.as_object() else {
            return Err(malformed("expected each `data:` line to hold a JSON object"));
        };
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            return Err(stream_error(error));
        }
        if !self.model_recorded
            && let Some(model) = chunk.get("model").and_then(Value::as_str).filter(|model| !model.is_empty())
        {
            // The model that answered (`gpt-4o-mini-2024-07-18` for `gpt-4o-mini`), on the
            // runtime's `chat` span that the stream is read in; a no-op in any other span.
            tracing::Span::current().record("gen_ai.response.model", model);
            self.model_recorded = true;
        }
        // The usage chunk asked for with `stream_options.include_usage` comes last, with empty
        // `choices`; some servers put usage on other chunks too.
        if let Some(usage) = chunk.get("usage").filter(|usage| !usage.is_null()) {
            out.push_back(ModelEvent::Usage(decode_usage(usage)?));
        }
        let choices = match chunk.get("choices") {
            None | Some(Value::Null) => return Ok(Flow::Continue),
            Some(Value::Array(choices)) => choices,
            Some(_) => return Err(malformed("expected `choices` to be an array")),
        };
        // The first choice: the one with `index` 0, or simply the first when there is no index.
        let choice = choices
            .iter()
            .find(|choice| choice.get("index").and_then(Value::as_u64) == Some(0))
            .or_else(|| choices.first().filter(|choice| choice.get("index").is_none()));
        let Some(choice) = choice else {
            return Ok(Flow::Continue);
        };
        let Some(choice) = choice.as_object() else {
            return Err(malformed("expected each of `choices` to be an object"));
        };
        match choice.get("delta") {
            None | Some(Value::Null) => {}
            Some(Value::Object(delta)) => self.decode_delta(delta, out)?,
            Some(_) => return Err(malformed("expected `choices[0].delta` to be an object")),
        }
        // Some servers send `""` rather than `null` while the response goes on.
        if let Some(Value::String(reason)) = choice.get("finish_reason")
            && !reason.is_empty()
        {
            self.complete = true;
            self.end_calls(out)?;
            if !self.finish_reported {
                self.finish_reported = true;
                out.push_back(ModelEvent::Finished(FinishReason::from_provider(reason)));
            }
        }
        Ok(Flow::Continue)
    }

    /// The body ended: checks that the response said it was complete, and ends the calls still open.
    pub(super) fn finish(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        if !self.complete {
            return Err(malformed(ENDED_EARLY));
        }
        self.end_calls(out)
    }

    fn decode_delta(&mut self, delta: &Map<String, Value>, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        match delta.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) if text.is_empty() => {}
            Some(Value::String(text)) => {
                self.caps.add_reply_text(text)?;
                out.push_back(ModelEvent::TextDelta(text.clone()));
            }
            Some(_) => return Err(malformed("expected `choices[0].delta.content` to be a string")),
        }
        match delta.get("tool_calls") {
            None | Some(Value::Null) => Ok(()),
            Some(Value::Array(calls)) => calls.iter().try_for_each(|call| self.decode_tool_call(call, out)),
            Some(_) => Err(malformed("expected `choices[0].delta.tool_calls` to be an array")),
        }
    }

    fn decode_tool_call(&mut self, call: &Value, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        let Some(call) = call.as_object() else {
            return Err(malformed("expected each of `choices[0].delta.tool_calls` to be an object"));
        };
        let provider_index = match call.get("index") {
            None | Some(Value::Null) => None,
            Some(index) => Some(
                index
                    .as_u64()
                    .ok_or_else(|| malformed("expected a tool call's `index` to be a non-negative integer"))?,
            ),
        };
        let id = optional_string(call, "id", "a tool call's `id`")?.filter(|id| !id.is_empty());
        let (name, arguments) = match call.get("function") {
            None | Some(Value::Null) => (None, None),
            Some(Value::Object(function)) => (
                optional_string(function, "name", "a tool call's `function.name`")?.filter(|name| !name.is_empty()),
                optional_string(function, "arguments", "a tool call's `function.arguments`")?,
            ),
            Some(_) => return Err(malformed("expected a tool call's `function` to be an object")),
        };

        if let Some(fragment) = arguments {
            self.caps.add_tool_arguments(fragment)?;
        }
        let position = self.position(provider_index, id);
        self.last_call = Some(position);
        let call = &mut self.calls[position];
        if call.ended {
            return Err(malformed(format!("expected no more deltas for tool call {position} after it finished")));
        }
        if call.id.is_none() {
            call.id = id.map(str::to_owned);
        }
        if call.name.is_none() {
            call.name = name.map(str::to_owned);
        }
        if let Some(fragment) = arguments.filter(|fragment| !fragment.is_empty()) {
            call.held_back.push(fragment.to_owned());
        }
        if !call.started && call.id.is_some() && call.name.is_some() {
            start(position, call, None, out);
        } else if call.started {
            release_arguments(position, call, out);
        }
        Ok(())
    }

    /// The position of the call a delta belongs to, adding a call when it is a new one.
    fn position(&mut self, provider_index: Option<u64>, id: Option<&str>) -> usize {
        let existing = match provider_index {
            Some(index) => self.by_provider_index.get(&index).copied(),
            // No index: a new id starts a new call, anything else continues the last one.
            None => self.last_call.filter(|&last| match (id, self.calls[last].id.as_deref()) {
                (Some(id), Some(last_id)) => id == last_id,
                _ => true,
            }),
        };
        existing.unwrap_or_else(|| {
            let position = self.calls.len();
            self.calls.push(ToolCall::default());
            if let Some(index) = provider_index {
                self.by_provider_index.insert(index, position);
            }
            position
        })
    }

    /// Ends every call still open, in order, starting those whose id never came.
    fn end_calls(&mut self, out: &mut VecDeque<ModelEvent>) -> Result<(), ModelError> {
        // Only the calls added since the last end are visited, so a response that repeats its
        // `finish_reason` does not walk every call again.
        for (position, call) in self.calls.iter_mut().enumerate().skip(self.ended_up_to) {
            if call.ended {
                continue;
            }
            if !call.started {
                if call.name.is_none() {
                    return Err(malformed(format!("tool call {position} finished before its `function.name` arrived")));
                }
                // Some OpenAI-compatible servers send no call ids: one is made up, so the tool
                // result can still name the call it answers.
                start(position, call, Some(format!("call_{position}")), out);
            }
            call.ended = true;
            out.push_back(ModelEvent::ToolCallEnd { index: position });
        }
        self.ended_up_to = self.calls.len();
        Ok(())
    }
}

fn start(position: usize, call: &mut ToolCall, fallback_id: Option<String>, out: &mut VecDeque<ModelEvent>) {
    let id = call.id.clone().or(fallback_id).unwrap_or_default();
    let name = call.name.clone().unwrap_or_default();
    call.started = true;
    out.push_back(ModelEvent::ToolCallStart { index: position, id, name });
    release_arguments(position, call, out);
}

fn release_arguments(position: usize, call: &mut ToolCall, out: &mut VecDeque<ModelEvent>) {
    for fragment in call.held_back.drain(..) {
        out.push_back(ModelEvent::ToolCallArguments { index: position, fragment });
    }
}

fn optional_string<'a>(object: &'a Map<String, Value>, key: &str, what: &str) -> Result<Option<&'a str>, ModelError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(malformed(format!("expected {what} to be a string"))),
    }
}

/// The `usage` object of a chunk: `prompt_tokens`, `completion_tokens` and `total_tokens`
/// (the sum when it is missing).
fn decode_usage(usage: &Value) -> Result<Usage, ModelError> {
    let Some(usage) = usage.as_object() else {
        return Err(malformed("expected `usage` to be an object"));
    };
    let count = |key: &str| match usage.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(Some)
            .ok_or_else(|| malformed(format!("expected `usage.{key}` to be a non-negative integer"))),
    };
    let prompt = count("prompt_tokens")?.unwrap_or(0);
    let completion = count("completion_tokens")?.unwrap_or(0);
    let total = count("total_tokens")?.unwrap_or(prompt.saturating_add(completion));
    Ok(Usage::new(prompt, completion, total))
}

/// An `{"error": ...}` chunk in the middle of the stream, as some gateways send when the upstream
/// model fails after the response started. Its `code` (a number, or a string such as LiteLLM's
/// `"500"`) gives the status; the message goes to the log.
fn stream_error(error: &Value) -> ModelError {
    let message = provider_errors::error_message(error).unwrap_or_else(|| "no message".to_owned());
    let error = provider_errors::with_error_fields(ProviderError::mid_stream(message), error);
    tracing::warn!(
        target: provider_errors::TARGET,
        status = error.status(),
        provider_type = error.provider_type(),
        code = error.code(),
        message = error.message(),
        "{error}"
    );
    error.into()
}

fn malformed(detail: impl Into<String>) -> ModelError {
    ModelError::Malformed(detail.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(lines: &[&str]) -> (Vec<ModelEvent>, Result<(), ModelError>) {
        let mut decoder = DeltaDecoder::default();
        let mut out = VecDeque::new();
        let mut result = Ok(());
        for line in lines {
            match decoder.decode(line, &mut out) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => break,
                Err(error) => {
                    result = Err(error);
                    break;
                }
            }
        }
        if result.is_ok() {
            result = decoder.finish(&mut out);
        }
        (out.into(), result)
    }

    fn args(index: usize, fragment: &str) -> ModelEvent {
        ModelEvent::ToolCallArguments { index, fragment: fragment.to_owned() }
    }

    #[test]
    fn calls_without_index_are_told_apart_by_id() {
        let (events, result) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(result, Ok(()));
        assert_eq!(
            events,
            vec![
                ModelEvent::ToolCallStart { index: 0, id: "a".into(), name: "f".into() },
                args(0, "{}"),
                ModelEvent::ToolCallStart { index: 1, id: "b".into(), name: "g".into() },
                args(1, "{"),
                args(1, "}"),
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::ToolCallEnd { index: 1 },
                ModelEvent::Finished(FinishReason::ToolCalls),
            ]
        );
    }

    #[test]
    fn a_call_without_an_id_gets_one_when_it_ends() {
        let (events, result) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}"#,
            "[DONE]",
        ]);
        assert_eq!(result, Ok(()));
        assert_eq!(
            events,
            vec![
                ModelEvent::ToolCallStart { index: 0, id: "call_0".into(), name: "f".into() },
                args(0, "{}"),
                ModelEvent::ToolCallEnd { index: 0 },
            ]
        );
    }

    #[test]
    fn a_call_that_never_gets_a_name_is_malformed() {
        let (_, result) = decode(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        ]);
        assert_eq!(result, Err(malformed("tool call 0 finished before its `function.name` arrived")));
    }

    #[test]
    fn other_choices_usage_chunks_and_empty_content_are_skipped() {
        let (events, result) = decode(&[
            r#"{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"h"},"finish_reason":""}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"i"},"finish_reason":"stop"}]}"#,
            r#"{"choices":[],"usage":{"total_tokens":3}}"#,
        ]);
        assert_eq!(result, Ok(()));
        assert_eq!(
            events,
            vec![
                ModelEvent::TextDelta("h".into()),
                ModelEvent::TextDelta("i".into()),
                ModelEvent::Finished(FinishReason::Stop),
                ModelEvent::Usage(Usage::new(0, 0, 3)),
            ]
        );
    }

    #[test]
    fn wrong_shapes_are_malformed_and_name_what_was_expected() {
        let cases = [
            ("[1,2]", "expected each `data:` line to hold a JSON object"),
            (r#"{"choices":{}}"#, "expected `choices` to be an array"),
            (r#"{"choices":[{"delta":{"content":5}}]}"#, "expected `choices[0].delta.content` to be a string"),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":-1}]}}]}"#,
                "expected a tool call's `index` to be a non-negative integer",
            ),
            (
                r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":{}}}]}}]}"#,
                "expected a tool call's `function.arguments` to be a string",
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(decode(&[line]).1, Err(malformed(expected)), "{line}");
        }
    }

    #[test]
    fn an_error_chunk_mid_stream_is_reported() {
        let (_, result) = decode(&[r#"{"error":{"code":502,"message":"upstream failed"}}"#]);
        assert_eq!(result, Err(ProviderError::mid_stream("upstream failed").with_code("502").into()));
        let (_, result) = decode(&[r#"{"error":{"message":"overloaded","type":"server_error","code":"500"}}"#]);
        let expected = ProviderError::mid_stream("overloaded").with_kind("server_error").with_code("500");
        assert_eq!(result, Err(expected.into()));
        assert_eq!(result.unwrap_err().status(), Some(500));
    }

    #[test]
    fn a_repeated_finish_ends_only_the_calls_that_came_after_the_last_one() {
        let (events, result) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g"}}]},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ]);
        assert_eq!(result, Ok(()));
        assert_eq!(
            events,
            vec![
                ModelEvent::ToolCallStart { index: 0, id: "a".into(), name: "f".into() },
                ModelEvent::ToolCallEnd { index: 0 },
                ModelEvent::Finished(FinishReason::ToolCalls),
                ModelEvent::ToolCallStart { index: 1, id: "b".into(), name: "g".into() },
                ModelEvent::ToolCallEnd { index: 1 },
            ]
        );
    }

    #[test]
    fn deltas_after_a_call_finished_are_malformed() {
        let (_, result) = decode(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}"#,
        ]);
        assert_eq!(result, Err(malformed("expected no more deltas for tool call 0 after it finished")));
    }
}
