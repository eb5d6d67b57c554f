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
/// Retries of a request that failed before its stream started, by default (as the OpenAI SDKs).
const DEFAULT_MAX_RETRIES: u32 = 2;
/// The first retry's backoff by default (as the OpenAI SDKs).
const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);

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
    /// Retries of a request that failed before its stream started
    /// ([`OpenAiConfig::with_max_retries`]); default 2.
    max_retries: u32,
    /// The first retry's backoff ([`OpenAiConfig::with_retry_base_delay`]); default 500 ms.
    retry_base_delay: Duration,
    /// Whether requests ask for usage ([`OpenAiConfig::with_include_usage`]); default yes.
    include_usage: bool,
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
            max_reply_bytes: crate::limits::DEFAULT_MAX_REPLY_BYTES,
            max_tool_argument_bytes: crate::limits::DEFAULT_MAX_TOOL_ARGUMENT_BYTES,
            headers: Vec::new(),
            model: None,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            include_usage: true,
        }
    }

    /// A configuration from the environment: `OPENAI_BASE_URL` (default
    /// `https://api.openai.com/v1`), `OPENAI_API_KEY` and `OPENAI_MODEL` (each none if unset or
    /// empty). `OPENAI_MODEL` is only a default: a later [`with_model`](Self::with_model)
    /// replaces it, so a model the program chose explicitly wins over the environment.
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// How many times a request that failed before its stream started is tried again: after
    /// HTTP 408, 409, 429 (not one that says the quota is used up) or 5xx, or a connection that
    /// failed. The wait doubles from [`with_retry_base_delay`](Self::with_retry_base_delay) up to
    /// 8 s, less up to a quarter at random, or is what the endpoint's `Retry-After` (seconds or
    /// an HTTP date) asks; no retry waits past the total [deadline](Self::with_deadline). `0`
    /// turns retries off. Default: 2.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert_eq!(OpenAiConfig::default().max_retries(), 2);
    /// assert_eq!(OpenAiConfig::default().with_max_retries(0).max_retries(), 0);
    /// ```
    #[must_use]
    pub fn with_max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// The backoff before the first retry, doubled for each next one. Default: 500 ms.
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::default().with_retry_base_delay(Duration::from_millis(100));
    /// assert_eq!(config.retry_base_delay(), Duration::from_millis(100));
    /// ```
    #[must_use]
    pub fn with_retry_base_delay(mut self, delay: Duration) -> Self {
        self.retry_base_delay = delay;
        self
    }

    /// Whether each request asks for the tokens it used (`"stream_options": {"include_usage":
    /// true}`), which the endpoint sends in a last chunk. Turn it off for an endpoint that
    /// refuses `stream_options`. Default: on.
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// assert!(OpenAiConfig::default().include_usage());
    /// assert!(!OpenAiConfig::default().with_include_usage(false).include_usage());
    /// ```
    #[must_use]
    pub fn with_include_usage(mut self, include: bool) -> Self {
        self.include_usage = include;
        self
    }

    /// The retry count set by [`with_max_retries`](Self::with_max_retries).
    pub fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// The first backoff set by [`with_retry_base_delay`](Self::with_retry_base_delay).
    pub fn retry_base_delay(&self) -> Duration {
        self.retry_base_delay
    }

    /// Whether requests ask for usage ([`with_include_usage`](Self::with_include_usage)).
    pub fn include_usage(&self) -> bool {
        self.include_usage
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
    /// Replaces the model `OPENAI_MODEL` gave [`from_env`](Self::from_env).
    ///
    /// ```
    /// use hooks_runtime::model::OpenAiConfig;
    ///
    /// let config = OpenAiConfig::new("https://api.openai.com/v1").with_model("gpt-4o-mini");
    /// assert_eq!(config.model(), Some("gpt-4o-mini"));
    /// ```
    #[must_use]
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

    /// The URL requests are posted to: `/chat/completions` after the base URL's path, before
    /// its query (`?api-version=...` on Azure OpenAI).
    pub(super) fn chat_completions_url(&self) -> String {
        match self.base_url.split_once('?') {
            Some((path, query)) => format!("{path}/chat/completions?{query}"),
            None => format!("{}/chat/completions", self.base_url),
        }
    }

    /// Why the base URL cannot work, if it cannot; the message never repeats the URL, whose
    /// query or user part may hold a key.
    pub(super) fn check_base_url(&self) -> Result<(), String> {
        let url = reqwest::Url::parse(&self.base_url).map_err(|error| {
            format!("the base URL is not a valid URL ({error}); it looks like `https://api.openai.com/v1`")
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("the base URL must start with `http://` or `https://`, not `{}:`", url.scheme()));
        }
        if url.fragment().is_some() {
            return Err("the base URL has a `#` fragment, which is never sent; remove it".to_owned());
        }
        Ok(())
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
            .field("base_url", &redacted_url(&self.base_url))
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("deadline", &self.deadline)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("max_tool_argument_bytes", &self.max_tool_argument_bytes)
            .field("headers", &header_names)
            .field("model", &self.model)
            .field("max_retries", &self.max_retries)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("include_usage", &self.include_usage)
            .finish()
    }
}

/// The base URL without the `/` after its path (a query, if any, is kept as it is).
fn trim_base_url(base_url: String) -> String {
    match base_url.split_once('?') {
        Some((path, query)) => format!("{}?{query}", path.trim_end_matches('/')),
        None => base_url.trim_end_matches('/').to_owned(),
    }
}

/// A URL as errors and `Debug` may show it: without its user part and query, which may hold
/// keys (`https://user:key@host/v1?api-key=...` shows as `https://host/v1?<redacted>`).
pub(super) fn redacted_url(url: &str) -> String {
    let (rest, query) = match url.split_once('?') {
        Some((rest, _)) => (rest, "?<redacted>"),
        None => (url, ""),
    };
    let rest = rest.split_once('#').map_or(rest, |(rest, _)| rest);
    let without_user = match rest.split_once("://") {
        Some((scheme, after)) => {
            let authority_end = after.find('/').unwrap_or(after.len());
            match after[..authority_end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &after[at + 1..]),
                None => rest.to_owned(),
            }
        }
        None => rest.to_owned(),
    };
    format!("{without_user}{query}")
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
    fn the_path_goes_before_the_base_urls_query() {
        let config = OpenAiConfig::new("https://x.openai.azure.com/openai/deployments/d/?api-version=2024-02-01");
        assert_eq!(config.base_url(), "https://x.openai.azure.com/openai/deployments/d?api-version=2024-02-01");
        assert_eq!(
            config.chat_completions_url(),
            "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01"
        );
        assert_eq!(config.check_base_url(), Ok(()));
    }

    #[test]
    fn a_base_url_that_cannot_work_is_refused_without_repeating_it() {
        for url in ["not a url?api-key=sk-secret", "ftp://host/v1?api-key=sk-secret", "http://host/v1#sk-secret"] {
            let problem = OpenAiConfig::new(url).check_base_url().unwrap_err();
            assert!(!problem.contains("sk-secret"), "{problem}");
            assert!(problem.contains("base URL"), "{problem}");
        }
    }

    #[test]
    fn redacted_urls_lose_their_user_part_and_query() {
        assert_eq!(redacted_url("https://user:sk-1@host:8443/v1?api-key=sk-2"), "https://host:8443/v1?<redacted>");
        assert_eq!(redacted_url("http://host/v1"), "http://host/v1");
        let shown = format!("{:?}", OpenAiConfig::new("https://u:p@host/v1?key=sk-3"));
        assert!(!shown.contains("sk-3") && !shown.contains("u:p"), "{shown}");
    }

    #[test]
    fn an_explicit_model_wins_over_openai_model() {
        let config = OpenAiConfig::from_vars(vars(&[("OPENAI_MODEL", "mock-500")]));
        assert_eq!(config.model(), Some("mock-500"));
        assert_eq!(config.with_model("mock-text").model(), Some("mock-text"));
    }

    #[test]
    fn debug_redacts_the_key_and_header_values() {
        let config = OpenAiConfig::default().with_api_key("sk-secret").with_header("api-key", "also-secret");
        let shown = format!("{config:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("<redacted>"));
    }
}
