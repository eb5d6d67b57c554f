//! What an endpoint's errors become: a [`ProviderError`] with the status, message, type, code
//! and param the body gives, cut to a size a log line and a stored reason can hold, and a
//! transport failure without the URL (its query or user part may hold a key).

use serde_json::Value;

use crate::error_chain::error_chain;
use crate::model::{ModelError, ProviderError};

/// At most this many bytes of a provider's error text are kept in [`ProviderError::message`]
/// and written to the log.
const MAX_ERROR_TEXT: usize = 512;
/// Where the client logs what endpoints said.
pub(super) const TARGET: &str = "hooks_runtime::model";

/// The provider error an error response describes: its status, and the JSON error object's
/// `message`, `type`, `code` (a string or a number) and `param`, or the start of the body as
/// text, or the status's reason.
pub(super) fn provider_error(status: reqwest::StatusCode, body: &[u8]) -> ProviderError {
    if let Ok(json) = serde_json::from_slice::<Value>(body) {
        let object = json.get("error").filter(|error| !error.is_null()).unwrap_or(&json);
        if let Some(message) = error_message(object) {
            return with_error_fields(ProviderError::new(status.as_u16(), message), object);
        }
    }
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    let message =
        if text.is_empty() { status.canonical_reason().unwrap_or("no message").to_owned() } else { cut(text) };
    ProviderError::new(status.as_u16(), message)
}

/// The `type`, `code` and `param` of an OpenAI-style error object, where it has them.
pub(super) fn with_error_fields(mut error: ProviderError, object: &Value) -> ProviderError {
    let text = |key: &str| match object.get(key) {
        Some(Value::String(text)) if !text.is_empty() => Some(cut(text)),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    if let Some(kind) = text("type") {
        error = error.with_kind(kind);
    }
    if let Some(code) = text("code") {
        error = error.with_code(code);
    }
    if let Some(param) = text("param") {
        error = error.with_param(param);
    }
    error
}

/// The message of an OpenAI-style error object (`{"message": ...}`), or of a bare error string.
pub(super) fn error_message(error: &Value) -> Option<String> {
    match error {
        Value::String(message) => Some(cut(message)),
        Value::Object(object) => object.get("message").and_then(Value::as_str).map(cut),
        _ => None,
    }
}

/// At most [`MAX_ERROR_TEXT`] bytes of `text`, cut at a character boundary, with a marker
/// saying how much was left out.
pub(super) fn cut(text: &str) -> String {
    if text.len() <= MAX_ERROR_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_ERROR_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... [{} more bytes]", &text[..end], text.len() - end)
}

/// An error body as the log shows it: lossy UTF-8, trimmed, cut.
pub(super) fn shown(body: &[u8]) -> String {
    cut(String::from_utf8_lossy(body).trim())
}

/// The provider's error at WARN with its status and kind; its body, which may quote what was
/// sent or hold a provider's internals (a connection string), at DEBUG only (H1: nothing of it
/// in the logs at the default level). What the error displays (and what is stored and served)
/// is its status and kind only.
pub(super) fn log_error_body(error: &ProviderError, body: &[u8], cut_short: Option<&str>) {
    tracing::warn!(
        target: TARGET,
        status = error.status(),
        provider_type = error.provider_type(),
        code = error.code(),
        cut_short,
        "{error} (its body, {} bytes, is logged at DEBUG under `{TARGET}`)",
        body.len()
    );
    tracing::debug!(target: TARGET, status = error.status(), body = %shown(body), "{error}: the body");
}

/// A failed request or body read: a timeout, a bad configuration, or a failed connection. The
/// URL is left out: its query or user part may hold a key.
pub(super) fn transport_error(error: reqwest::Error) -> ModelError {
    let error = error.without_url();
    let detail = error_chain(&error);
    if error.is_timeout() {
        ModelError::Timeout(detail)
    } else if error.is_builder() {
        ModelError::Other(format!("could not build the request: {detail}"))
    } else {
        ModelError::transport_with_source(detail, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_errors_come_from_json_or_text() {
        let status = reqwest::StatusCode::UNAUTHORIZED;
        let error = provider_error(status, br#"{"error":{"message":"bad key","type":"x","code":401,"param":null}}"#);
        assert_eq!(
            (error.message(), error.provider_type(), error.code(), error.param()),
            ("bad key", Some("x"), Some("401"), None)
        );
        assert_eq!(provider_error(status, br#"{"error":"nope"}"#).message(), "nope");
        assert_eq!(provider_error(status, br#"{"message":"flat","param":"messages"}"#).param(), Some("messages"));
        assert_eq!(provider_error(status, b"  plain text\n").message(), "plain text");
        assert_eq!(provider_error(status, b"").message(), "Unauthorized");
        let long = "é".repeat(MAX_ERROR_TEXT);
        let message = provider_error(status, long.as_bytes()).message().to_owned();
        assert!(message.ends_with(&format!("... [{} more bytes]", MAX_ERROR_TEXT)), "{message}");
        assert!(message.len() < MAX_ERROR_TEXT + 32);
    }
}
