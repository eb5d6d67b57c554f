//! The one error shape: `{"error": {"code", "message"}}`.

use serde::Serialize;

/// The body of every error response.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorBody<'a> {
    pub(crate) error: ErrorDetail<'a>,
}

/// A stable code a client matches, and a sentence a person reads.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorDetail<'a> {
    pub(crate) code: &'a str,
    pub(crate) message: &'a str,
}
