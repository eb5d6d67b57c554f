//! [`OpenAiModel`]: a [`Model`] over any OpenAI-compatible chat-completions endpoint (OpenAI,
//! OpenRouter, vLLM, llama.cpp, Ollama, ...), streamed as server-sent events.
//!
//! Stages, one module each: [`config`] (where the endpoint is), this module (the request and the
//! HTTP errors before the stream starts), [`sse`] (the event-stream framing) and [`stream`]
//! (what each chunk means, and the errors a stream can end with). [`limits`] holds what bounds
//! every request: the idle timeout, the total deadline and the size caps.

mod config;
mod limits;
mod provider_errors;
mod retry;
mod sse;
mod stream;

pub use config::OpenAiConfig;

use hooks_core::LlmMessage;
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::{Model, ModelError, ModelRequest, ModelStream, ProviderError, ToolSpec};
use limits::{Caps, Deadline, Waiting};
use provider_errors::{TARGET, log_error_body, provider_error, shown, transport_error};

use crate::error_chain::error_chain;
use stream::OpenAiStream;

/// At most this much of an error response's body is read, for its message.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// Sent with every request, so an endpoint's operators can tell this client apart.
const USER_AGENT: &str = concat!("hooks-runtime/", env!("CARGO_PKG_VERSION"));

/// A [`Model`] that streams chat completions from an OpenAI-compatible endpoint.
///
/// Each request is a `POST {base_url}/chat/completions` with `"stream": true` (and, unless
/// [turned off](OpenAiConfig::with_include_usage), `"stream_options": {"include_usage": true}`);
/// the response's server-sent events become [`ModelEvent`](super::ModelEvent)s as they arrive:
/// text deltas, tool calls whose start is announced as soon as the id and name are known and
/// whose argument fragments are passed on exactly as received, the finish reason and the usage.
///
/// A request that fails before its stream starts, with HTTP 408, 409, 429 (unless the quota is
/// used up), 5xx or a failed connection, is tried again, at most
/// [`max_retries`](OpenAiConfig::with_max_retries) times, after an exponential backoff with
/// jitter or the wait `Retry-After` asks for, and never past the total
/// [deadline](OpenAiConfig::with_deadline). Each retry is logged at WARN (target
/// `hooks_runtime::model`) with the status and the attempt. The request's
/// [abort signal](ModelRequest::abort) ends a wait at once.
///
/// ```no_run
/// use hooks_runtime::types::LlmMessage;
/// use hooks_runtime::model::{Model, ModelEvent, ModelRequest, OpenAiConfig, OpenAiModel};
///
/// # async fn run() -> Result<(), hooks_runtime::model::ModelError> {
/// let model = OpenAiModel::new(OpenAiConfig::from_env());
/// let request = ModelRequest::new("gpt-4o-mini", vec![LlmMessage::new("user", "Say hello.")], Vec::new());
/// let mut stream = model.stream(request).await?;
/// while let Some(event) = stream.next_event().await {
///     match event? {
///         ModelEvent::TextDelta(text) => print!("{text}"),
///         ModelEvent::Usage(usage) => println!("\n{} tokens", usage.total_tokens),
///         _ => {}
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

    /// One attempt: the response, once its status says a stream follows.
    async fn attempt(
        &self,
        client: &reqwest::Client,
        body: &[u8],
        deadline: &Deadline,
    ) -> Result<reqwest::Response, Failed> {
        let sent = client.post(self.config.chat_completions_url()).body(body.to_vec()).send();
        let response = match deadline.wait(Waiting::Answer, sent).await.map_err(Failed::late)? {
            Ok(response) => response,
            Err(error) => return Err(Failed { connection_failed: error.is_connect(), error: transport_error(error) }),
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry::retry_after(response.headers());
            let (body, cut_short) = read_capped(response, deadline).await;
            let mut error = provider_error(status, &body);
            if let Some(wait) = retry_after {
                error = error.with_retry_after(wait);
            }
            log_error_body(&error, &body, cut_short.as_deref());
            return Err(Failed::late(error.into()));
        }
        let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok());
        if content_type.is_some_and(|content_type| content_type.starts_with("application/json")) {
            // The endpoint ignored `"stream": true`, or answered with an error and a 2xx status.
            let (body, _) = read_capped(response, deadline).await;
            tracing::warn!(
                target: TARGET,
                status = status.as_u16(),
                "the model endpoint answered with JSON, not an event stream (its body, {} bytes, is logged at DEBUG)",
                body.len()
            );
            tracing::debug!(target: TARGET, status = status.as_u16(), body = %shown(&body), "the JSON body");
            return Err(Failed::late(ModelError::Malformed(
                "expected a `text/event-stream` response, got `application/json` (the body is logged at DEBUG)"
                    .to_owned(),
            )));
        }
        Ok(response)
    }
}

#[async_trait::async_trait]
impl Model for OpenAiModel {
    /// The endpoint's model id when one is set ([`OpenAiConfig::with_model`], `OPENAI_MODEL`),
    /// else the prompt's model name, which then goes out as the id.
    fn request_model<'a>(&'a self, requested: &'a str) -> &'a str {
        self.config.model().unwrap_or(requested)
    }

    /// The GenAI conventions' name of the provider whose public endpoint the base URL is
    /// (`api.openai.com` is `openai`, `*.openai.azure.com` is `azure.ai.openai`, ...); `None` for
    /// any other host (a local server, a gateway), whose provider the URL does not tell.
    fn provider_name(&self) -> Option<&str> {
        provider_of(self.config.base_url())
    }

    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let client = self.client.as_ref().map_err(|error| ModelError::Other(error.clone()))?;
        let mut chat = ChatRequest::new(&request, self.config.include_usage());
        if let Some(model) = self.config.model() {
            chat.model = model;
        }
        let body = serde_json::to_vec(&chat)
            .map_err(|error| ModelError::Other(format!("could not encode the request: {error}")))?;
        // Started before the first attempt, so connecting, every attempt and every wait count.
        let deadline = Deadline::start(&self.config);
        let mut retries = 0;
        loop {
            if request.is_aborted() {
                return Err(ModelError::Cancelled);
            }
            let failed = match self.attempt(client, &body, &deadline).await {
                Ok(response) => {
                    return Ok(Box::new(OpenAiStream::new(response, deadline, Caps::new(&self.config))));
                }
                Err(failed) => failed,
            };
            if retries >= self.config.max_retries() || !retry::is_retryable(&failed.error, failed.connection_failed) {
                return Err(match (failed.error, self.config.model()) {
                    // The prompt's model name went out as the id: say so, as the likely cause.
                    (ModelError::Provider(error), None) => {
                        ModelError::Provider(error.with_model_from_prompt(&request.model))
                    }
                    (error, _) => error,
                });
            }
            retries += 1;
            let asked = failed.error.provider().and_then(ProviderError::retry_after);
            let wait = retry::backoff(retries, self.config.retry_base_delay(), asked);
            if !deadline.leaves(wait) {
                tracing::warn!(target: TARGET, status = failed.error.status(), attempts = retries, "{}; not retried: waiting {wait:?} would pass the total deadline", failed.error);
                return Err(failed.error);
            }
            tracing::warn!(
                target: TARGET,
                status = failed.error.status(),
                attempt = retries + 1,
                max_attempts = self.config.max_retries() + 1,
                "{}; retrying in {wait:?} (attempt {} of at most {})",
                failed.error,
                retries + 1,
                self.config.max_retries() + 1
            );
            retry::sleep_unless_aborted(wait, &request).await?;
        }
    }
}

/// The provider whose public OpenAI-compatible endpoint `base_url` is, by the host's name, as the
/// GenAI semantic conventions name it (`gen_ai.provider.name`).
fn provider_of(base_url: &str) -> Option<&'static str> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?;
    let provider = match host {
        "api.openai.com" => "openai",
        "api.deepseek.com" => "deepseek",
        "api.groq.com" => "groq",
        "api.mistral.ai" => "mistral_ai",
        "api.x.ai" => "x_ai",
        "api.perplexity.ai" => "perplexity",
        "generativelanguage.googleapis.com" => "gcp.gemini",
        _ if host.ends_with(".openai.azure.com") => "azure.ai.openai",
        _ => return None,
    };
    Some(provider)
}

/// A failed attempt, and whether it failed to connect (so nothing was sent).
struct Failed {
    error: ModelError,
    connection_failed: bool,
}

impl Failed {
    /// A failure after the endpoint was reached.
    fn late(error: ModelError) -> Self {
        Failed { error, connection_failed: false }
    }
}

/// The request body, in the chat-completions shape.
#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [LlmMessage],
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<Value>,
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
    parameters: std::borrow::Cow<'a, Value>,
}

impl<'a> ChatRequest<'a> {
    fn new(request: &'a ModelRequest, include_usage: bool) -> Self {
        let tool = |tool: &'a ToolSpec| ToolDefinition {
            kind: "function",
            function: FunctionDefinition {
                name: &tool.name,
                description: &tool.description,
                parameters: with_properties(&tool.parameters),
            },
        };
        ChatRequest {
            model: &request.model,
            messages: &request.messages,
            stream: true,
            stream_options: include_usage.then(|| json!({"include_usage": true})),
            tools: request.tools.iter().map(tool).collect(),
        }
    }
}

/// An object schema without `properties` (a tool without parameters) gets `"properties": {}`,
/// which OpenAI requires of an object schema; any other schema is sent as it is.
fn with_properties(schema: &Value) -> std::borrow::Cow<'_, Value> {
    match schema {
        Value::Object(object) if object.get("type") == Some(&json!("object")) && !object.contains_key("properties") => {
            let mut object = object.clone();
            object.insert("properties".to_owned(), Value::Object(Map::new()));
            std::borrow::Cow::Owned(Value::Object(object))
        }
        _ => std::borrow::Cow::Borrowed(schema),
    }
}

/// The client, with the configuration's headers and connect timeout; every problem found at once.
fn build_client(config: &OpenAiConfig) -> Result<reqwest::Client, String> {
    let mut problems = Vec::new();
    if let Err(problem) = config.check_base_url() {
        problems.push(problem);
    }
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::ACCEPT, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::USER_AGENT, HeaderValue::from_static(USER_AGENT));
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
                if header_name == header::USER_AGENT {
                    // The configuration's own `User-Agent` replaces the client's.
                    headers.insert(header_name, value);
                } else {
                    headers.append(header_name, value);
                }
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
        .map_err(|error| format!("could not set up the HTTP client: {}", error_chain(&error.without_url())))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_provider_is_named_by_a_known_public_host_only() {
        let provider = |url: &str| OpenAiModel::new(OpenAiConfig::new(url)).provider_name().map(str::to_owned);
        assert_eq!(provider("https://api.openai.com/v1").as_deref(), Some("openai"));
        assert_eq!(provider("https://my-team.openai.azure.com/openai/v1").as_deref(), Some("azure.ai.openai"));
        assert_eq!(provider("https://api.groq.com/openai/v1").as_deref(), Some("groq"));
        assert_eq!(provider("http://127.0.0.1:11434/v1"), None, "a local server's provider is not known");
        assert_eq!(provider("https://api.openai.com.example.org/v1"), None, "a look-alike host is not OpenAI");
        assert_eq!(provider("not a url"), None);
    }

    #[test]
    fn the_request_model_is_the_configured_id_else_the_prompts_name() {
        let configured = OpenAiModel::new(OpenAiConfig::new("http://127.0.0.1:1/v1").with_model("gpt-4o-mini"));
        assert_eq!(configured.request_model("ops"), "gpt-4o-mini");
        let plain = OpenAiModel::new(OpenAiConfig::new("http://127.0.0.1:1/v1"));
        assert_eq!(plain.request_model("ops"), "ops");
    }

    #[test]
    fn the_body_asks_for_usage_and_omits_tools_when_there_are_none() {
        let request = ModelRequest::new("m", vec![LlmMessage::new("user", "hi")], vec![]);
        let body = serde_json::to_value(ChatRequest::new(&request, true)).unwrap();
        assert_eq!(
            body,
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true,
                   "stream_options": {"include_usage": true}})
        );
        let body = serde_json::to_value(ChatRequest::new(&request, false)).unwrap();
        assert!(body.get("stream_options").is_none(), "{body}");
    }

    #[test]
    fn a_tool_without_parameters_is_sent_with_empty_properties() {
        let tool = |parameters| ToolSpec { name: "now".into(), description: "The time.".into(), parameters };
        let request = ModelRequest::new(
            "m",
            vec![],
            vec![tool(json!({"type": "object"})), tool(json!({"type": "object", "properties": {"a": {}}}))],
        );
        let body = serde_json::to_value(ChatRequest::new(&request, false)).unwrap();
        assert_eq!(body["tools"][0]["function"]["parameters"], json!({"type": "object", "properties": {}}));
        assert_eq!(body["tools"][1]["function"]["parameters"], json!({"type": "object", "properties": {"a": {}}}));
    }

    #[tokio::test]
    async fn bad_headers_are_all_reported_by_the_first_request() {
        let config = OpenAiConfig::new("http://127.0.0.1:9/v1")
            .with_api_key("sk\nnewline")
            .with_header("bad name", "v")
            .with_header("X-Ok", "bad\u{7f}value");
        let model = OpenAiModel::new(config);
        let request = ModelRequest::new("m", vec![], vec![]);
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
