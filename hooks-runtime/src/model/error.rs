//! What can go wrong talking to a model: [`ModelError`], and the provider's own error,
//! typed ([`ProviderError`], [`ProviderErrorKind`]).
//!
//! A `Display` of either says what went wrong and the HTTP status, never what the provider
//! wrote: an endpoint's error body can hold internal addresses, credentials or a whole HTML
//! page, and these texts are stored with the run and served to end users. The provider's text
//! is kept in [`ProviderError::message`] for the caller, and the OpenAI client logs the body at
//! WARN, truncated.

use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// What went wrong talking to a model.
///
/// ```
/// use hooks_runtime::model::{ModelError, ProviderError, ProviderErrorKind};
///
/// let error = ModelError::from(ProviderError::new(429, "Rate limit reached for gpt-4o"));
/// assert_eq!(error.to_string(), "model endpoint returned HTTP 429 (rate limited)");
/// assert_eq!(error.provider().map(ProviderError::kind), Some(ProviderErrorKind::RateLimited));
/// assert_eq!(ModelError::timeout("no answer in 30s").to_string(), "model request timed out: no answer in 30s");
/// ```
///
/// Two errors are equal when their variants and texts are; a transport error's source is not
/// compared.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ModelError {
    /// The endpoint answered with an error: an HTTP error status, or an error object in the
    /// middle of the stream.
    Provider(ProviderError),
    /// The response could not be understood. The text says what was expected, never what the
    /// response held.
    Malformed(String),
    /// No answer in time.
    Timeout(String),
    /// The connection failed. `message` says how (the OpenAI client's names the error and each
    /// of its causes, the URL left out); `source` is the HTTP client's error itself, when there
    /// is one, which [`Error::source`] returns.
    Transport {
        /// How the connection failed.
        message: String,
        /// The HTTP client's error (a `reqwest::Error` from the OpenAI client). Shared, so
        /// that the error stays `Clone`.
        source: Option<Arc<dyn Error + Send + Sync>>,
    },
    /// The response passed a size cap, such as the most reply text one response may hold; the
    /// stream was abandoned there. The text names the cap and its value, never the response's
    /// contents.
    TooLarge(String),
    /// The request was given up because its abort signal fired (the run was aborted), for
    /// instance while waiting to retry.
    Cancelled,
    /// Anything else, such as a script that ran out of responses or a configuration that
    /// cannot work.
    Other(String),
}

impl ModelError {
    /// A [`ModelError::Malformed`].
    pub fn malformed(detail: impl Into<String>) -> Self {
        ModelError::Malformed(detail.into())
    }

    /// A [`ModelError::Timeout`].
    pub fn timeout(detail: impl Into<String>) -> Self {
        ModelError::Timeout(detail.into())
    }

    /// A [`ModelError::Transport`] without a source.
    pub fn transport(detail: impl Into<String>) -> Self {
        ModelError::Transport { message: detail.into(), source: None }
    }

    /// A [`ModelError::Transport`] caused by `source`, the HTTP client's error, which
    /// [`Error::source`] returns.
    ///
    /// ```
    /// use std::error::Error as _;
    /// use hooks_runtime::model::ModelError;
    ///
    /// let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
    /// let error = ModelError::transport_with_source("error sending request: connection refused", refused);
    /// assert_eq!(error.to_string(), "model connection failed: error sending request: connection refused");
    /// let cause = error.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
    /// assert_eq!(cause.kind(), std::io::ErrorKind::ConnectionRefused);
    /// ```
    pub fn transport_with_source(detail: impl Into<String>, source: impl Error + Send + Sync + 'static) -> Self {
        ModelError::Transport { message: detail.into(), source: Some(Arc::new(source)) }
    }

    /// A [`ModelError::TooLarge`].
    pub fn too_large(detail: impl Into<String>) -> Self {
        ModelError::TooLarge(detail.into())
    }

    /// A [`ModelError::Other`].
    ///
    /// ```
    /// use hooks_runtime::model::ModelError;
    ///
    /// assert_eq!(ModelError::other("no response left").to_string(), "model error: no response left");
    /// ```
    pub fn other(detail: impl Into<String>) -> Self {
        ModelError::Other(detail.into())
    }

    /// The provider's error, when the endpoint answered with one.
    ///
    /// ```
    /// use hooks_runtime::model::{ModelError, ProviderError};
    ///
    /// let error = ModelError::from(ProviderError::new(503, "overloaded"));
    /// assert_eq!(error.provider().and_then(ProviderError::status), Some(503));
    /// assert!(ModelError::Cancelled.provider().is_none());
    /// ```
    pub fn provider(&self) -> Option<&ProviderError> {
        match self {
            ModelError::Provider(error) => Some(error),
            _ => None,
        }
    }

    /// The HTTP status of a provider error (for an error in the middle of a stream, the status
    /// its `code` names, when it names one).
    pub fn status(&self) -> Option<u16> {
        self.provider().and_then(ProviderError::status)
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Provider(error) => fmt::Display::fmt(error, f),
            ModelError::Malformed(detail) => write!(f, "malformed model response: {detail}"),
            ModelError::Timeout(detail) => write!(f, "model request timed out: {detail}"),
            ModelError::Transport { message, .. } => write!(f, "model connection failed: {message}"),
            ModelError::TooLarge(detail) => write!(f, "model response too large: {detail}"),
            ModelError::Cancelled => f.write_str("model request cancelled: the run was aborted"),
            ModelError::Other(detail) => write!(f, "model error: {detail}"),
        }
    }
}

/// A transport error's source is the HTTP client's error itself, not the `Arc` that shares
/// it, so `downcast_ref` finds it.
impl Error for ModelError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ModelError::Transport { source, .. } => source.as_deref().map(|source| source as &(dyn Error + 'static)),
            _ => None,
        }
    }
}

impl PartialEq for ModelError {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ModelError::Provider(a), ModelError::Provider(b)) => a == b,
            (ModelError::Malformed(a), ModelError::Malformed(b))
            | (ModelError::Timeout(a), ModelError::Timeout(b))
            | (ModelError::TooLarge(a), ModelError::TooLarge(b))
            | (ModelError::Other(a), ModelError::Other(b)) => a == b,
            (ModelError::Transport { message: a, .. }, ModelError::Transport { message: b, .. }) => a == b,
            (ModelError::Cancelled, ModelError::Cancelled) => true,
            _ => false,
        }
    }
}

impl Eq for ModelError {}

impl From<ProviderError> for ModelError {
    fn from(error: ProviderError) -> Self {
        ModelError::Provider(error)
    }
}

/// What kind of error a provider reported, read from the HTTP status and the provider's
/// `type` and `code`, so a caller can tell a rate limit from a full context window without
/// parsing text.
///
/// ```
/// use hooks_runtime::model::{ProviderError, ProviderErrorKind};
///
/// let overflow = ProviderError::new(400, "This model's maximum context length is 128000 tokens.")
///     .with_code("context_length_exceeded");
/// assert_eq!(overflow.kind(), ProviderErrorKind::ContextLengthExceeded);
/// assert_eq!(ProviderError::new(401, "bad key").kind(), ProviderErrorKind::Authentication);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderErrorKind {
    /// 429: too many requests for now; retried.
    RateLimited,
    /// 429 with `insufficient_quota`: the account's quota or credit is used up; not retried.
    QuotaExceeded,
    /// The request does not fit the model's context window (`context_length_exceeded`).
    ContextLengthExceeded,
    /// 401: the API key is missing or wrong.
    Authentication,
    /// 403: the key may not use this model or endpoint.
    PermissionDenied,
    /// 404: no such model or endpoint.
    NotFound,
    /// 408 or 409: the endpoint gave up on the request, or it conflicted with another; retried.
    Conflict,
    /// Another 4xx: the request itself is wrong.
    BadRequest,
    /// 5xx: the endpoint or the model behind it failed; retried.
    Server,
    /// A status or code of no known kind.
    Other,
}

impl ProviderErrorKind {
    /// The kind, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            ProviderErrorKind::RateLimited => "rate limited",
            ProviderErrorKind::QuotaExceeded => "quota exceeded",
            ProviderErrorKind::ContextLengthExceeded => "context window exceeded",
            ProviderErrorKind::Authentication => "authentication failed",
            ProviderErrorKind::PermissionDenied => "permission denied",
            ProviderErrorKind::NotFound => "model or endpoint not found",
            ProviderErrorKind::Conflict => "request timeout or conflict",
            ProviderErrorKind::BadRequest => "bad request",
            ProviderErrorKind::Server => "server error",
            ProviderErrorKind::Other => "error",
        }
    }

    fn classify(status: Option<u16>, kind: Option<&str>, code: Option<&str>) -> Self {
        let said = |word: &str| code == Some(word) || kind == Some(word);
        if said("insufficient_quota") {
            return ProviderErrorKind::QuotaExceeded;
        }
        if said("context_length_exceeded") || said("string_above_max_length") {
            return ProviderErrorKind::ContextLengthExceeded;
        }
        match status {
            Some(401) => ProviderErrorKind::Authentication,
            Some(403) => ProviderErrorKind::PermissionDenied,
            Some(404) => ProviderErrorKind::NotFound,
            Some(408 | 409) => ProviderErrorKind::Conflict,
            Some(429) => ProviderErrorKind::RateLimited,
            Some(400..=499) => ProviderErrorKind::BadRequest,
            Some(500..=599) => ProviderErrorKind::Server,
            _ if said("rate_limit_exceeded") => ProviderErrorKind::RateLimited,
            _ if said("server_error") => ProviderErrorKind::Server,
            _ => ProviderErrorKind::Other,
        }
    }
}

impl fmt::Display for ProviderErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// An error the endpoint reported: its HTTP status (or, in the middle of a stream, the status
/// its `code` names) and the OpenAI-style error object's `type`, `code` and `param`.
///
/// Its `Display` is `model endpoint returned HTTP 500 (server error)`: the status and the
/// kind, never [`message`](Self::message), which is the provider's own text (possibly
/// anything: an upstream address, a whole HTML page) and goes to logs, not to end users.
///
/// ```
/// use hooks_runtime::model::ProviderError;
///
/// let error = ProviderError::new(500, "upstream 10.1.2.3 failed; db password=hunter2")
///     .with_kind("server_error")
///     .with_code("500");
/// assert_eq!(error.to_string(), "model endpoint returned HTTP 500 (server error)");
/// assert_eq!(error.provider_type(), Some("server_error"));
/// assert!(error.message().contains("hunter2"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct ProviderError {
    status: Option<u16>,
    // Boxed strings, as the note below, keep a `Result` with this error small.
    provider_type: Option<Box<str>>,
    code: Option<Box<str>>,
    param: Option<Box<str>>,
    message: String,
    mid_stream: bool,
    retry_after: Option<Duration>,
    /// The model id the request named when it was the prompt's model name, for lack of one
    /// configured: what a "bad request" or "not found" is most likely about.
    model_from_prompt: Option<Box<str>>,
}

impl ProviderError {
    /// An error answered with HTTP `status`, with the provider's message.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        ProviderError {
            status: Some(status),
            provider_type: None,
            code: None,
            param: None,
            message: message.into(),
            mid_stream: false,
            retry_after: None,
            model_from_prompt: None,
        }
    }

    /// An error object sent in the middle of a streamed response, after a 2xx status. Its
    /// status is the one its `code` names (LiteLLM sends `"code": "500"`), if any.
    ///
    /// ```
    /// use hooks_runtime::model::ProviderError;
    ///
    /// let error = ProviderError::mid_stream("upstream failed").with_code("500");
    /// assert_eq!(error.status(), Some(500));
    /// assert_eq!(error.to_string(), "model endpoint reported an error mid-stream, HTTP 500 (server error)");
    /// ```
    pub fn mid_stream(message: impl Into<String>) -> Self {
        ProviderError { status: None, mid_stream: true, ..ProviderError::new(0, message) }
    }

    /// The provider's error `type`, such as `invalid_request_error`.
    #[must_use]
    pub fn with_kind(mut self, provider_type: impl Into<String>) -> Self {
        self.provider_type = Some(provider_type.into().into_boxed_str());
        self
    }

    /// The provider's error `code`, such as `context_length_exceeded` or `"500"` (numbers are
    /// kept as their text). For an error in the middle of a stream, a code that is an HTTP
    /// error status (400 to 599) becomes its status.
    #[must_use]
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        let code = code.into();
        if self.mid_stream
            && let Ok(status) = code.trim().parse::<u16>()
            && (400..600).contains(&status)
        {
            self.status = Some(status);
        }
        self.code = Some(code.into_boxed_str());
        self
    }

    /// The request parameter the error is about, such as `messages`.
    #[must_use]
    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into().into_boxed_str());
        self
    }

    /// How long the endpoint asked to wait before trying again (`Retry-After`).
    #[must_use]
    pub fn with_retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = Some(wait);
        self
    }

    /// The HTTP status, if there is one.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// What kind of error this is, from the status, `type` and `code`.
    pub fn kind(&self) -> ProviderErrorKind {
        ProviderErrorKind::classify(self.status, self.provider_type.as_deref(), self.code.as_deref())
    }

    /// The provider's error `type`.
    pub fn provider_type(&self) -> Option<&str> {
        self.provider_type.as_deref()
    }

    /// The provider's error `code`, as text.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }

    /// The parameter the error is about.
    pub fn param(&self) -> Option<&str> {
        self.param.as_deref()
    }

    /// The provider's own message (or the start of its error body). Not for end users: it is
    /// whatever the endpoint wrote.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the error came in the middle of a streamed response.
    pub fn is_mid_stream(&self) -> bool {
        self.mid_stream
    }

    /// The wait the endpoint asked for with `Retry-After`, if it did.
    pub fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    /// The model id the request sent when no id was configured and the prompt's model name
    /// (the name the model was added under) was sent instead; set on a bad request or not
    /// found, which its `Display` then explains.
    pub fn model_from_prompt(&self) -> Option<&str> {
        self.model_from_prompt.as_deref()
    }

    /// Notes that the request named `model`, the prompt's model name, for lack of a configured
    /// id: kept on a bad request or not found only, the answers a wrong id gets.
    #[cfg(feature = "openai")]
    pub(crate) fn with_model_from_prompt(mut self, model: &str) -> Self {
        if matches!(self.kind(), ProviderErrorKind::BadRequest | ProviderErrorKind::NotFound) {
            self.model_from_prompt = Some(model.into());
        }
        self
    }
}

impl ProviderError {
    /// The error's sentence: where it came from (HTTP status, mid-stream) and its kind; never
    /// the provider's message, which may quote the request.
    fn describe(&self) -> String {
        let source = match (self.mid_stream, self.status) {
            (false, Some(status)) => format!("model endpoint returned HTTP {status}"),
            (false, None) => "model endpoint returned an error".to_owned(),
            (true, Some(status)) => format!("model endpoint reported an error mid-stream, HTTP {status}"),
            (true, None) => "model endpoint reported an error mid-stream".to_owned(),
        };
        let mut text = format!("{source} ({})", self.kind());
        if let Some(model) = &self.model_from_prompt {
            text.push_str(&format!(
                "; the request named model `{model}`, the prompt's model name, since no model id is configured \
                 (`OPENAI_MODEL` or `OpenAiConfig::with_model`)"
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kind_comes_from_code_and_type_before_the_status() {
        let quota = ProviderError::new(429, "You exceeded your current quota").with_kind("insufficient_quota");
        assert_eq!(quota.kind(), ProviderErrorKind::QuotaExceeded);
        let quota = ProviderError::new(429, "quota").with_code("insufficient_quota");
        assert_eq!(quota.kind(), ProviderErrorKind::QuotaExceeded);
        assert_eq!(ProviderError::new(429, "slow down").kind(), ProviderErrorKind::RateLimited);
        assert_eq!(ProviderError::new(409, "").kind(), ProviderErrorKind::Conflict);
        assert_eq!(ProviderError::new(422, "").kind(), ProviderErrorKind::BadRequest);
        assert_eq!(ProviderError::new(502, "").kind(), ProviderErrorKind::Server);
        assert_eq!(ProviderError::mid_stream("x").kind(), ProviderErrorKind::Other);
        assert_eq!(
            ProviderError::mid_stream("x").with_code("rate_limit_exceeded").kind(),
            ProviderErrorKind::RateLimited
        );
    }

    #[test]
    fn a_mid_stream_code_becomes_a_status_only_when_it_is_an_error_status() {
        assert_eq!(ProviderError::mid_stream("x").with_code("500").status(), Some(500));
        assert_eq!(ProviderError::mid_stream("x").with_code("200").status(), None);
        assert_eq!(ProviderError::mid_stream("x").with_code("server_error").status(), None);
        assert_eq!(ProviderError::new(400, "x").with_code("500").status(), Some(400), "an HTTP status stays");
    }
}
