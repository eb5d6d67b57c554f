//! Every error a handler returns: a status, a stable code and a sentence that names what was
//! wrong in the request. No error text carries message contents, tool arguments or results.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::dto::error_body::{ErrorBody, ErrorDetail};

/// An error response: `{"error": {"code": "...", "message": "..."}}`, with a `Retry-After`
/// header when the same request can succeed later without anything else changing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) code: &'static str,
    pub(crate) message: String,
    /// Seconds after which a retry may succeed.
    pub(crate) retry_after: Option<u32>,
    /// Whether the connection is closed after this answer (`Connection: close`).
    pub(crate) close: bool,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), retry_after: None, close: false }
    }

    /// The same error, saying that a retry after `seconds` may succeed (`Retry-After`).
    pub(crate) fn retry_after(mut self, seconds: u32) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// The same error, closing the connection after it is sent.
    pub(crate) fn closing(mut self) -> Self {
        self.close = true;
        self
    }

    pub(crate) fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// The one answer for a thread that does not exist and a thread of another user: the two
    /// must look the same.
    pub(crate) fn thread_not_found(thread_id: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, "thread_not_found", format!("no thread `{}`", printable(thread_id)))
    }

    /// A store failure: the details go to the log, the client learns only that the store failed.
    pub(crate) fn store(error: &dyn std::fmt::Display) -> Self {
        tracing::error!(target: "hooks_server", "message store failure: {error}");
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable", "the message store failed; try again later")
    }
}

/// An identifier from the request, shortened and stripped of control characters so that an
/// error echoing it stays one readable line.
pub(crate) fn printable(text: &str) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_control()).take(80).collect();
    if text.chars().count() > 80 {
        out.push('…');
    }
    out
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody { error: ErrorDetail { code: self.code, message: &self.message } };
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.close {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}
