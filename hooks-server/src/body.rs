//! Request bodies: read within the size limit, parsed as JSON, and checked field by field with
//! errors that name the field and the expected type but never echo a value (a value may be a
//! message's contents).

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use std::sync::Arc;

use axum::extract::{FromRef, FromRequest, Request};
use axum::http::StatusCode;
use serde_json::{Map, Value};

use crate::config::ServerConfig;
use crate::error::ApiError;

/// A request body parsed as JSON.
pub(crate) struct JsonBody(pub(crate) Value);

/// Any state that holds the server's configuration extracts a body (axum's `FromRef`).
impl<S> FromRequest<S> for JsonBody
where
    S: Send + Sync,
    Arc<ServerConfig>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let config = Arc::<ServerConfig>::from_ref(state);
        let limit = config.max_body_bytes;
        let timeout = config.body_read_timeout;
        let read = tokio::time::timeout(timeout, Bytes::from_request(request, state)).await.map_err(|_| {
            ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                "body_timeout",
                format!(
                    "the request body did not arrive within {} ms (ServerConfig::body_read_timeout); send it at once",
                    timeout.as_millis()
                ),
            )
        })?;
        let bytes = read.map_err(|rejection| match rejection {
            // The only buffering failure with this status is the length limit.
            BytesRejection::FailedToBufferBody(_) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                too_large(limit)
            }
            _ => ApiError::bad_request("unreadable_body", "the request body could not be read"),
        })?;
        if bytes.is_empty() {
            return Err(ApiError::bad_request("invalid_json", "the request body is empty; send a JSON document"));
        }
        // serde_json's syntax errors name a position and what was expected, never the input.
        serde_json::from_slice(&bytes).map(JsonBody).map_err(|error| {
            ApiError::bad_request("invalid_json", format!("the request body is not valid JSON: {error}"))
        })
    }
}

fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("the request body is larger than the limit of {limit} bytes"),
    )
}

/// A JSON object's fields, taken one by one; [`Fields::finish`] refuses the ones left over.
pub(crate) struct Fields {
    what: &'static str,
    map: Map<String, Value>,
}

impl Fields {
    /// The fields of `body`, which must be an object; `what` names it in errors.
    pub(crate) fn of(body: Value, what: &'static str) -> Result<Self, ApiError> {
        match body {
            Value::Object(map) => Ok(Fields { what, map }),
            other => Err(ApiError::bad_request(
                "invalid_body",
                format!("{what} must be a JSON object, not {}", type_name(&other)),
            )),
        }
    }

    /// A required string field.
    pub(crate) fn string(&mut self, name: &str) -> Result<String, ApiError> {
        match self.map.remove(name) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(self.wrong_type(name, "a string", &other)),
            None => Err(ApiError::bad_request(
                "missing_field",
                format!("{} needs the field `{name}` (a string)", self.what),
            )),
        }
    }

    /// An optional object field.
    pub(crate) fn object_or_empty(&mut self, name: &str) -> Result<Map<String, Value>, ApiError> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(map)) => Ok(map),
            Some(other) => Err(self.wrong_type(name, "an object", &other)),
        }
    }

    /// An optional string field; `null` is absent.
    pub(crate) fn optional_string(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(self.wrong_type(name, "a string", &other)),
        }
    }

    /// An optional object field; `null` is absent.
    pub(crate) fn optional_object(&mut self, name: &str) -> Result<Option<Map<String, Value>>, ApiError> {
        match self.map.remove(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(map)) => Ok(Some(map)),
            Some(other) => Err(self.wrong_type(name, "an object", &other)),
        }
    }

    /// Refuses the fields nobody took, naming them and the ones that are known.
    pub(crate) fn finish(self, known: &[&str]) -> Result<(), ApiError> {
        let Some(field) = self.map.keys().next() else { return Ok(()) };
        let known: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
        Err(ApiError::bad_request(
            "unknown_field",
            format!(
                "{} has an unknown field `{}`; its fields are {}",
                self.what,
                crate::error::printable(field),
                known.join(", ")
            ),
        ))
    }

    fn wrong_type(&self, name: &str, expected: &str, got: &Value) -> ApiError {
        ApiError::bad_request(
            "invalid_field",
            format!("field `{name}` of {} must be {expected}, not {}", self.what, type_name(got)),
        )
    }
}

/// The JSON type of a value, for errors that must not show the value.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
