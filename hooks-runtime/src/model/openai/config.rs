//! Where an OpenAI-compatible endpoint is and how to talk to it.

use std::fmt;
use std::time::Duration;

/// The endpoint [`OpenAiConfig::from_env`] uses when `OPENAI_BASE_URL` is not set.
const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// How long to wait for a TCP (and TLS) connection by default.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to wait for the response to start, and between two pieces of it, by default.
/// Generous, since reasoning models can think for a while before their first token.
const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(300);
/// How long one request may take in all, from connecting to the last byte of the response, by
/// default: room for a reasoning model's long answer, but not for an endpoint that never ends.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(600);
/// The most reply text one response may hold by default: far more than any model's output limit,
/// far less than what would strain the process.
const DEFAULT_MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;
/// The most tool-call arguments, all calls together, one response may hold by default.
const DEFAULT_MAX_TOOL_ARGUMENT_BYTES: usize = 8 * 1024 * 1024;

/// Where an OpenAI-compatible chat-completions endpoint is, and how to talk to it.
///
/// Built with [`OpenAiConfig::from_env`] or [`OpenAiConfig::new`], then adjusted with the `with_*`
/// methods. `Debug` never shows the API key.
///
/// ```
/// use std::time::Duration;
/// use hooks_runtime::model::OpenAiConfig;
///
/// let config = OpenAiConfig::new("http://localhost:11434/v1/")
///     .with_api_key("sk-local")
///     .with_timeout(Duration::from_secs(30))
///     .with_header("OpenAI-Organization", "org-123");
/// assert_eq!(config.base_url(), "http://localhost:11434/v1");
/// assert!(!format!("{config:?}").contains("sk-local"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    base_url: String,
    api_key: Option<String>,
    request_timeout: Duration,
    connect_timeout: Duration,
    /// The whole request, connect to last byte ([`OpenAiConfig::with_deadline`]); default 600 s.
    deadline: Duration,
    /// Reply text per response ([`OpenAiConfig::with_max_reply_bytes`]); default 8 MiB.
    max_reply_bytes: usize,
    /// Tool-call arguments per response, all calls together
    /// ([`OpenAiConfig::with_max_tool_argument_bytes`]); default 8 MiB.
    max_tool_argument_bytes: usize,
    headers: Vec<(String, String)>,
    model: Option<String>,
}

impl OpenAiConfig {
    /// A configuration for the endpoint at `base_url` (the part before `/chat/completions`,
    /// such as `https://api.openai.com/v1`), with no API key and the default timeouts.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::new("https://openrouter.ai/api/v1");
    /// assert_eq!(config.api_key(), None);
    /// ```
    pub fn new(base_url: impl Into<String>) -> Self {
        OpenAiConfig {
            base_url: trim_base_url(base_url.into()),
            api_key: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            deadline: DEFAULT_DEADLINE,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            max_tool_argument_bytes: DEFAULT_MAX_TOOL_ARGUMENT_BYTES,
            headers: Vec::new(),
            model: None,
        }
    }

    /// A configuration from the environment: `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`), `OPENAI_API_KEY` and `OPENAI_MODEL` (each none if unset or
    /// empty).
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env();
    /// assert!(config.base_url().starts_with("http"));
    /// ```
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`OpenAiConfig::from_env`] over any source of variables, so it can be tested without
    /// touching the process environment.
    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| var(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
        let mut config = Self::new(set("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()));
        if let Some(key) = set("OPENAI_API_KEY") {
            config = config.with_api_key(key);
        }
        if let Some(model) = set("OPENAI_MODEL") {
            config = config.with_model(model);
        }
        config
    }

    /// Uses the endpoint at `base_url` (a trailing `/` is dropped).
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_base_url("http://127.0.0.1:8080/v1/");
    /// assert_eq!(config.base_url(), "http://127.0.0.1:8080/v1");
    /// ```
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = trim_base_url(base_url.into());
        self
    }

    /// Sends `Authorization: Bearer <api_key>` with every request.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::new("https://api.openai.com/v1").with_api_key("sk-test");
    /// assert_eq!(config.api_key(), Some("sk-test"));
    /// ```
    pub fn with_api_key(mut self, api_key: impl Into<String>) -> Self {
        self.api_key = Some(api_key.into());
        self
    }

    /// How long to wait for the response to start, and then for each next piece of it: an idle
    /// timeout, which a response that keeps streaming never reaches. The whole request is bounded
    /// by [`with_deadline`](Self::with_deadline) as well. Default: 300 seconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_timeout(Duration::from_secs(60));
    /// assert_eq!(config.request_timeout(), Duration::from_secs(60));
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long to wait for the connection (TCP and TLS). Default: 10 seconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_connect_timeout(Duration::from_secs(3));
    /// assert_eq!(config.connect_timeout(), Duration::from_secs(3));
    /// ```
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one request may take in all: connecting, waiting for the response headers, and
    /// reading the whole body, error bodies included. An endpoint that trickles bytes or sends
    /// only keep-alive comments never reaches the idle timeout ([`with_timeout`](Self::with_timeout));
    /// this is what ends it. When it passes, the stream is abandoned with a
    /// [`ModelError::Timeout`](crate::model::ModelError::Timeout) that names this deadline. It
    /// counts wall-clock time, including the time the runtime spends between two events of the
    /// stream (running `tool_call_started` hooks, say). Default: 600 seconds.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_deadline(Duration::from_secs(120));
    /// assert_eq!(config.deadline(), Duration::from_secs(120));
    /// ```
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The most reply text, in bytes of UTF-8, one response may hold. The stream is abandoned as
    /// soon as a text delta would pass it, with a
    /// [`ModelError::TooLarge`](crate::model::ModelError::TooLarge) that names this cap; the text
    /// is never buffered beyond it. Default: 8 MiB.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_max_reply_bytes(1024 * 1024);
    /// assert_eq!(config.max_reply_bytes(), 1024 * 1024);
    /// ```
    pub fn with_max_reply_bytes(mut self, bytes: usize) -> Self {
        self.max_reply_bytes = bytes;
        self
    }

    /// The most tool-call arguments, in bytes, one response may hold, all its calls together. The
    /// stream is abandoned as soon as an argument fragment would pass it, with a
    /// [`ModelError::TooLarge`](crate::model::ModelError::TooLarge) that names this cap. Default:
    /// 8 MiB.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_max_tool_argument_bytes(64 * 1024);
    /// assert_eq!(config.max_tool_argument_bytes(), 64 * 1024);
    /// ```
    pub fn with_max_tool_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_tool_argument_bytes = bytes;
        self
    }

    /// Sends an extra header with every request, such as `OpenAI-Organization`, or the `api-key`
    /// header some gateways want instead of `Authorization`. Names and values are checked when a
    /// request is sent.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::from_env().with_header("HTTP-Referer", "https://example.com");
    /// assert_eq!(config.headers().len(), 1);
    /// ```
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The endpoint, without a trailing `/`.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("https://api.openai.com/v1").base_url(), "https://api.openai.com/v1");
    /// ```
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Sends `model` as the endpoint's model id in place of the prompt's model name, which is the
    /// name the runtime knows the model by (`"tool-reasoning"`) rather than a provider's id.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::new("https://api.openai.com/v1").with_model("gpt-4o-mini");
    /// assert_eq!(config.model(), Some("gpt-4o-mini"));
    /// ```
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The endpoint model id set with [`with_model`](Self::with_model).
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The API key, if one is set.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("http://localhost:8080/v1").api_key(), None);
    /// ```
    pub fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// The idle timeout set by [`OpenAiConfig::with_timeout`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("http://localhost:8080/v1").request_timeout(), Duration::from_secs(300));
    /// ```
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The connect timeout set by [`OpenAiConfig::with_connect_timeout`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("http://localhost:8080/v1").connect_timeout(), Duration::from_secs(10));
    /// ```
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// The total deadline set by [`OpenAiConfig::with_deadline`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("http://localhost:8080/v1").deadline(), Duration::from_secs(600));
    /// ```
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The reply text cap set by [`OpenAiConfig::with_max_reply_bytes`].
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("http://localhost:8080/v1").max_reply_bytes(), 8 * 1024 * 1024);
    /// ```
    pub fn max_reply_bytes(&self) -> usize {
        self.max_reply_bytes
    }

    /// The tool-call arguments cap set by [`OpenAiConfig::with_max_tool_argument_bytes`].
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::new("http://localhost:8080/v1").max_tool_argument_bytes(), 8 * 1024 * 1024);
    /// ```
    pub fn max_tool_argument_bytes(&self) -> usize {
        self.max_tool_argument_bytes
    }

    /// The extra headers, in the order they were added.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert!(OpenAiConfig::new("http://localhost:8080/v1").headers().is_empty());
    /// ```
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// The URL requests are posted to.
    pub(super) fn chat_completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

impl Default for OpenAiConfig {
    /// The official endpoint, with no API key: the same as [`OpenAiConfig::from_env`] with nothing set.
    fn default() -> Self {
        Self::new(DEFAULT_BASE_URL)
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("deadline", &self.deadline)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("max_tool_argument_bytes", &self.max_tool_argument_bytes)
            .field("headers", &header_names)
            .field("model", &self.model)
            .finish()
    }
}

fn trim_base_url(mut base_url: String) -> String {
    let trimmed = base_url.trim_end_matches('/').len();
    base_url.truncate(trimmed);
    base_url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn from_env_defaults_to_the_official_endpoint_without_a_key() {
        let config = OpenAiConfig::from_vars(vars(&[]));
        assert_eq!(config.base_url(), "https://api.openai.com/v1");
        assert_eq!(config.api_key(), None);
        assert_eq!(config, OpenAiConfig::default());
    }

    #[test]
    fn from_env_reads_base_url_and_key_and_ignores_empty_values() {
        let config = OpenAiConfig::from_vars(vars(&[
            ("OPENAI_BASE_URL", "http://localhost:1234/v1/"),
            ("OPENAI_API_KEY", "sk-x"),
        ]));
        assert_eq!(config.base_url(), "http://localhost:1234/v1");
        assert_eq!(config.api_key(), Some("sk-x"));
        assert_eq!(config.chat_completions_url(), "http://localhost:1234/v1/chat/completions");

        let config = OpenAiConfig::from_vars(vars(&[("OPENAI_BASE_URL", " "), ("OPENAI_API_KEY", "")]));
        assert_eq!(config.base_url(), "https://api.openai.com/v1");
        assert_eq!(config.api_key(), None);
    }

    #[test]
    fn debug_redacts_the_key_and_header_values() {
        let config = OpenAiConfig::default().with_api_key("sk-secret").with_header("api-key", "also-secret");
        let shown = format!("{config:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("<redacted>"));
    }
}
