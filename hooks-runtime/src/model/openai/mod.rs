//! [`OpenAiModel`]: a [`Model`] over any OpenAI-compatible chat-completions endpoint (OpenAI,
//! OpenRouter, vLLM, llama.cpp, Ollama, ...), streamed as server-sent events.
//!
//! Stages, one module each: [`config`] (where the endpoint is), this module (the request and the
//! HTTP errors before the stream starts), [`sse`] (the event-stream framing) and [`stream`]
//! (what each chunk means, and the errors a stream can end with). [`limits`] holds what bounds
//! every request: the idle timeout, the total deadline and the size caps.

mod config;
mod limits;
mod sse;
mod stream;

pub use config::OpenAiConfig;

use hooks_core::LlmMessage;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::Value;

use super::{Model, ModelError, ModelRequest, ModelStream, ToolSpec};
use limits::{Caps, Deadline, Waiting};
use stream::OpenAiStream;

/// At most this much of an error response's body is read, for its message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// At most this many characters of a non-JSON error body go into [`ModelError::Http`].
const MAX_ERROR_TEXT: usize = 500;

/// A [`Model`] that streams chat completions from an OpenAI-compatible endpoint.
///
/// Each request is a `POST {base_url}/chat/completions` with `"stream": true`; the response's
/// server-sent events become [`ModelEvent`](super::ModelEvent)s as they arrive: text deltas, and
/// tool calls whose start is announced as soon as the id and name are known and whose argument
/// fragments are passed on exactly as received.
///
/// ```no_run
/// use hooks_runtime::LlmMessage;
/// use hooks_runtime::model::{Model, ModelEvent, ModelRequest, OpenAiConfig, OpenAiModel};
///
/// # async fn run() -> Result<(), hooks_runtime::model::ModelError> {
/// let model = OpenAiModel::new(OpenAiConfig::from_env());
/// let request = ModelRequest {
///     model: "gpt-4o-mini".to_owned(),
///     messages: vec![LlmMessage::new("user", "Say hello.")],
///     tools: Vec::new(),
/// };
/// let mut stream = model.stream(request).await?;
/// while let Some(event) = stream.next_event().await {
///     if let ModelEvent::TextDelta(text) = event? {
///         print!("{text}");
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    config: OpenAiConfig,
    /// The HTTP client, or why it could not be set up (reported by every request).
    client: Result<reqwest::Client, String>,
}

impl OpenAiModel {
    /// A model for the endpoint `config` describes. Sends nothing yet; a configuration that cannot
    /// work (an invalid header name, say) is reported by the first request, as
    /// [`ModelError::Other`].
    ///
    /// ```
    /// use hooks_runtime::model::{OpenAiConfig, OpenAiModel};
    ///
    /// let model = OpenAiModel::new(OpenAiConfig::new("http://localhost:11434/v1"));
    /// assert_eq!(model.config().base_url(), "http://localhost:11434/v1");
    /// ```
    pub fn new(config: OpenAiConfig) -> Self {
        let client = build_client(&config);
        OpenAiModel { config, client }
    }

    /// The configuration this model was made with.
    ///
    /// ```
    /// use hooks_runtime::model::{OpenAiConfig, OpenAiModel};
    ///
    /// let model = OpenAiModel::new(OpenAiConfig::default().with_api_key("sk-test"));
    /// assert_eq!(model.config().api_key(), Some("sk-test"));
    /// ```
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

#[async_trait::async_trait]
impl Model for OpenAiModel {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let client = self.client.as_ref().map_err(|error| ModelError::Other(error.clone()))?;
        let mut chat = ChatRequest::new(&request);
        if let Some(model) = self.config.model() {
            chat.model = model;
        }
        let body = serde_json::to_vec(&chat)
            .map_err(|error| ModelError::Other(format!("could not encode the request: {error}")))?;
        // Started before the request is built into a future, so connecting counts as well.
        let deadline = Deadline::start(&self.config);
        let sent = client.post(self.config.chat_completions_url()).body(body).send();
        let response = deadline.wait(Waiting::Answer, sent).await?.map_err(transport_error)?;

        let status = response.status();
        if !status.is_success() {
            let (body, cut_short) = read_capped(response, &deadline).await;
            let mut message = http_error_message(status, &body);
            if let Some(reason) = cut_short {
                message.push_str(&format!(" (the rest of the error body was not read: {reason})"));
            }
            return Err(ModelError::Http { status: status.as_u16(), message });
        }
        let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok());
        if content_type.is_some_and(|content_type| content_type.starts_with("application/json")) {
            // The endpoint ignored `"stream": true`, or answered with an error and a 2xx status.
            let (body, _) = read_capped(response, &deadline).await;
            let detail = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|json| json.get("error").and_then(error_message))
                .map(|message| format!(": the endpoint said {message:?}"))
                .unwrap_or_default();
            return Err(ModelError::Malformed(format!(
                "expected a `text/event-stream` response, got `application/json`{detail}"
            )));
        }
        Ok(Box::new(OpenAiStream::new(response, deadline, Caps::new(&self.config))))
    }
}

/// The request body, in the chat-completions shape.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [LlmMessage],
    stream: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolDefinition<'a>>,
}

#[derive(Serialize)]
struct ToolDefinition<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: FunctionDefinition<'a>,
}

#[derive(Serialize)]
struct FunctionDefinition<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl<'a> ChatRequest<'a> {
    fn new(request: &'a ModelRequest) -> Self {
        let tool = |tool: &'a ToolSpec| ToolDefinition {
            kind: "function",
            function: FunctionDefinition {
                name: &tool.name,
                description: &tool.description,
                parameters: &tool.parameters,
            },
        };
        ChatRequest {
            model: &request.model,
            messages: &request.messages,
            stream: true,
            tools: request.tools.iter().map(tool).collect(),
        }
    }
}

/// The client, with the configuration's headers and connect timeout; every problem found at once.
fn build_client(config: &OpenAiConfig) -> Result<reqwest::Client, String> {
    let mut problems = Vec::new();
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
    if let Some(key) = config.api_key() {
        match HeaderValue::from_str(&format!("Bearer {key}")) {
            Ok(mut value) => {
                value.set_sensitive(true);
                headers.insert(header::AUTHORIZATION, value);
            }
            Err(_) => problems.push("the API key holds characters an HTTP header cannot carry".to_owned()),
        }
    }
    for (name, value) in config.headers() {
        let Ok(header_name) = HeaderName::from_bytes(name.as_bytes()) else {
            problems.push(format!("`{name}` is not a valid HTTP header name"));
            continue;
        };
        match HeaderValue::from_str(value) {
            Ok(mut value) => {
                value.set_sensitive(true);
                headers.append(header_name, value);
            }
            Err(_) => problems.push(format!("the value of header `{name}` holds characters a header cannot carry")),
        }
    }
    if !problems.is_empty() {
        return Err(format!("the OpenAI configuration cannot work: {}", problems.join("; ")));
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .connect_timeout(config.connect_timeout())
        .build()
        .map_err(|error| format!("could not set up the HTTP client: {}", error_chain(&error)))
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of a body, within the request's deadline. It is only
/// read for a message, so a failed read ends it quietly; a timeout is returned as why the body is
/// cut short.
async fn read_capped(mut response: reqwest::Response, deadline: &Deadline) -> (Vec<u8>, Option<String>) {
    let mut body = Vec::new();
    while body.len() < MAX_ERROR_BODY {
        match deadline.wait(Waiting::Body, response.chunk()).await {
            Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
            Ok(_) => break,
            Err(error) => {
                body.truncate(MAX_ERROR_BODY);
                let detail = match error {
                    ModelError::Timeout(detail) => detail,
                    other => other.to_string(),
                };
                return (body, Some(detail));
            }
        }
    }
    body.truncate(MAX_ERROR_BODY);
    (body, None)
}

/// The message of an error response: the JSON `error.message` (or `message`, or an `error`
/// string), else the start of the body as text, else the status's reason.
fn http_error_message(status: reqwest::StatusCode, body: &[u8]) -> String {
    if let Ok(json) = serde_json::from_slice::<Value>(body) {
        let message = json.get("error").and_then(error_message).or_else(|| error_message(&json));
        if let Some(message) = message {
            return message;
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    if text.is_empty() {
        return status.canonical_reason().unwrap_or("no message").to_owned();
    }
    let mut shown: String = text.chars().take(MAX_ERROR_TEXT).collect();
    if shown.len() < text.len() {
        shown.push_str("...");
    }
    shown
}

/// The message of an OpenAI-style error object (`{"message": ...}`), or of a bare error string.
fn error_message(error: &Value) -> Option<String> {
    match error {
        Value::String(message) => Some(message.clone()),
        Value::Object(object) => object.get("message").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// A failed request or body read: a timeout, a bad configuration, or a failed connection.
fn transport_error(error: reqwest::Error) -> ModelError {
    let detail = error_chain(&error);
    if error.is_timeout() {
        ModelError::Timeout(detail)
    } else if error.is_builder() {
        ModelError::Other(format!("could not build the request: {detail}"))
    } else {
        ModelError::Transport(detail)
    }
}

/// An error and its sources, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut detail = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !detail.contains(&cause_text) {
            detail.push_str(": ");
            detail.push_str(&cause_text);
        }
        source = cause.source();
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_body_omits_tools_when_there_are_none() {
        let request = ModelRequest { model: "m".into(), messages: vec![LlmMessage::new("user", "hi")], tools: vec![] };
        let body = serde_json::to_value(ChatRequest::new(&request)).unwrap();
        assert_eq!(body, json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}));
    }

    #[test]
    fn error_messages_come_from_json_or_text() {
        let status = reqwest::StatusCode::UNAUTHORIZED;
        assert_eq!(http_error_message(status, br#"{"error":{"message":"bad key","type":"x"}}"#), "bad key");
        assert_eq!(http_error_message(status, br#"{"error":"nope"}"#), "nope");
        assert_eq!(http_error_message(status, br#"{"message":"flat"}"#), "flat");
        assert_eq!(http_error_message(status, b"  plain text\n"), "plain text");
        assert_eq!(http_error_message(status, b""), "Unauthorized");
        let long = "x".repeat(MAX_ERROR_TEXT + 10);
        assert_eq!(http_error_message(status, long.as_bytes()).len(), MAX_ERROR_TEXT + 3);
    }

    #[tokio::test]
    async fn bad_headers_are_all_reported_by_the_first_request() {
        let config = OpenAiConfig::new("http://127.0.0.1:9/v1")
            .with_api_key("sk\nnewline")
            .with_header("bad name", "v")
            .with_header("X-Ok", "bad\u{7f}value");
        let model = OpenAiModel::new(config);
        let request = ModelRequest { model: "m".into(), messages: vec![], tools: vec![] };
        let Err(ModelError::Other(message)) = model.stream(request).await else {
            panic!("expected a configuration error");
        };
        assert!(message.contains("API key"), "{message}");
        assert!(message.contains("`bad name`"), "{message}");
        assert!(message.contains("`X-Ok`"), "{message}");
        assert!(!message.contains("sk\nnewline"), "{message}");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let model =
            OpenAiModel::new(OpenAiConfig::default().with_api_key("sk-hidden").with_header("api-key", "hidden-too"));
        assert!(model.client.is_ok());
        let shown = format!("{model:?}");
        assert!(!shown.contains("hidden"), "{shown}");
    }
}
