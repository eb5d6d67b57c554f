//! Request bodies: read within the size limit, parsed as JSON, and deserialized into their
//! typed DTO ([`crate::dto`]) with errors that name the field and the expected type but never
//! echo a value (a value may be a message's contents).
//!
//! serde's own messages do echo values (`invalid type: string "secret", expected a map`), so
//! none is passed on: an error is rebuilt from its field path (`serde_path_to_error`), the JSON
//! type found there, and the expectation of the type being read (the text after serde's
//! `expected`, which comes from the DTO's types, never from the input).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::StatusCode;
use serde_json::Value;

use crate::config::ServerConfig;
use crate::dto::request_body::RequestBody;
use crate::error::{ApiError, printable};

/// A request body deserialized into its DTO `T`.
pub(crate) struct JsonBody<T>(pub(crate) T);

/// A request body that may be any JSON (a user value).
pub(crate) struct AnyJson(pub(crate) Value);

/// Any state that holds the server's configuration extracts a body (axum's `FromRef`).
impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    Arc<ServerConfig>: FromRef<S>,
    T: RequestBody,
{
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let AnyJson(value) = AnyJson::from_request(request, state).await?;
        parse(&value).map(JsonBody)
    }
}

impl<S> FromRequest<S> for AnyJson
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
        serde_json::from_slice(&bytes).map(AnyJson).map_err(|error| {
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

/// `value` as a `T`, or the error that names what is wrong without showing a value.
pub(crate) fn parse<T: RequestBody>(value: &Value) -> Result<T, ApiError> {
    let what = T::WHAT;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "invalid_body",
            format!("{what} must be a JSON object, not {}", type_name(value)),
        ));
    }
    let refused = match serde_path_to_error::deserialize(value) {
        Ok(body) => return Ok(body),
        Err(error) => error,
    };
    let path = refused.path().to_string();
    let error = refusal(what, &path, value_at(value, refused.path()), &refused.into_inner().to_string());
    if error.code != "unknown_field" {
        return Err(error);
    }
    // serde stops at the first unknown field it meets; a missing or mistyped known field is the
    // more useful answer, so the known fields alone are read once more.
    let known = known_fields(&error.message);
    let mut fields = value.as_object().cloned().unwrap_or_default();
    fields.retain(|key, _| known.contains(&key.as_str()));
    let fields = Value::Object(fields);
    match serde_path_to_error::deserialize::<_, T>(&fields) {
        Err(refused) => {
            let path = refused.path().to_string();
            Err(refusal(what, &path, value_at(&fields, refused.path()), &refused.into_inner().to_string()))
        }
        Ok(_) => Err(error),
    }
}

/// The field names an `unknown_field` message lists after `its fields are`, each in backticks.
fn known_fields(message: &str) -> Vec<&str> {
    let list = message.rsplit_once("its fields are ").map_or("", |(_, list)| list);
    list.split('`').skip(1).step_by(2).collect()
}

/// The error for serde's message `text` about the field at `path` (holding `found`, when it is
/// there), in this server's words.
fn refusal(what: &str, path: &str, found: Option<&Value>, text: &str) -> ApiError {
    // `missing field `name``: the name is the DTO's.
    if let Some(rest) = text.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        return ApiError::bad_request("missing_field", format!("{what} needs the field `{name}`"));
    }
    // `unknown field `key`, expected one of `a`, `b``: the key is the client's (a name, shown
    // printable), the list the DTO's.
    if let Some(rest) = text.strip_prefix("unknown field `")
        && let Some((key, known)) = rest.rsplit_once("`, expected ")
    {
        // serde lists one field as `a`, two as `a` or `b`, more as one of `a`, `b`, `c`.
        let known = known.strip_prefix("one of ").unwrap_or(known).replace("` or `", "`, `");
        return ApiError::bad_request(
            "unknown_field",
            format!("{what} has an unknown field `{}`; its fields are {known}", printable(key)),
        );
    }
    let field = if path.is_empty() || path == "." { "?" } else { path };
    let expected = text.rsplit_once(", expected ").map(|(_, expected)| json_words(expected));
    let found = found.map_or("absent", type_name);
    let message = match expected {
        Some(expected) => format!("field `{field}` of {what} must be {expected}, not {found}"),
        None => format!("field `{field}` of {what} is not valid here ({found})"),
    };
    ApiError::bad_request("invalid_field", message)
}

/// serde's name of an expected type in JSON's words.
fn json_words(expected: &str) -> &str {
    match expected {
        "a map" => "an object",
        "a sequence" => "an array",
        "a borrowed string" => "a string",
        other => other,
    }
}

/// The value at a serde path in `root` (the body's own fields; the DTOs nest no deeper than
/// their JSON values).
fn value_at<'a>(root: &'a Value, path: &serde_path_to_error::Path) -> Option<&'a Value> {
    path.iter().try_fold(root, |value, segment| match segment {
        serde_path_to_error::Segment::Map { key } => value.get(key),
        serde_path_to_error::Segment::Seq { index } => value.get(index),
        _ => None,
    })
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dto::approvals::{Decision, DecisionRequest};
    use crate::dto::threads::{NewMessage, NewThread};

    /// A well-formed `arguments_sha256` (64 hex digits).
    const SHA: &str = "0000000000000000000000000000000000000000000000000000000000000000";

    fn refused<T: RequestBody + std::fmt::Debug>(body: Value) -> ApiError {
        parse::<T>(&body).unwrap_err()
    }

    #[test]
    fn errors_name_the_field_and_its_type_and_never_the_value() {
        for (error, code, names) in [
            (
                refused::<NewMessage>(json!({ "content": ["SECRET"] })),
                "invalid_field",
                "field `content` of a message must be a string, not an array",
            ),
            (refused::<NewMessage>(json!({ "content": 5 })), "invalid_field", "must be a string, not a number"),
            (
                refused::<NewMessage>(json!({ "content": "hi", "text": "SECRET" })),
                "unknown_field",
                "a message has an unknown field `text`; its fields are `content`",
            ),
            (refused::<NewMessage>(json!({})), "missing_field", "a message needs the field `content`"),
            // A missing or mistyped field is named before an unknown one.
            (
                refused::<NewMessage>(json!({ "text": "SECRET" })),
                "missing_field",
                "a message needs the field `content`",
            ),
            (refused::<NewMessage>(json!({ "content": 5, "text": "SECRET" })), "invalid_field", "field `content`"),
            (refused::<DecisionRequest>(json!({ "note": 1 })), "missing_field", "needs the field `decision`"),
            (refused::<NewMessage>(json!("SECRET")), "invalid_body", "a message must be a JSON object, not a string"),
            (
                refused::<NewThread>(json!({ "agent": "a", "arguments": "SECRET" })),
                "invalid_field",
                "field `arguments` of a new thread must be an object, not a string",
            ),
            (
                refused::<NewThread>(json!({ "agent": "a", "x": 1 })),
                "unknown_field",
                "its fields are `agent`, `arguments`",
            ),
            (
                refused::<DecisionRequest>(json!({ "decision": "deny", "arguments_sha256": SHA, "x": 1 })),
                "unknown_field",
                "its fields are `decision`, `arguments_sha256`, `reason`, `arguments`",
            ),
            (
                refused::<DecisionRequest>(json!({ "decision": "SECRET", "arguments_sha256": SHA })),
                "invalid_field",
                "field `decision` of an approval decision must be `\"approve\"` or `\"deny\"`, not a string",
            ),
            (
                refused::<DecisionRequest>(json!({ "decision": true, "arguments_sha256": SHA })),
                "invalid_field",
                "must be `\"approve\"` or `\"deny\"`, not a boolean",
            ),
            (
                refused::<DecisionRequest>(json!({ "decision": "deny", "arguments_sha256": SHA, "reason": 5 })),
                "invalid_field",
                "field `reason`",
            ),
        ] {
            assert_eq!(error.code, code, "{}", error.message);
            assert!(error.message.contains(names), "{}", error.message);
            assert!(!error.message.contains("SECRET"), "{}", error.message);
        }
    }

    #[test]
    fn null_is_an_absent_optional_field() {
        let thread: NewThread = parse(&json!({ "agent": "a", "arguments": null })).unwrap();
        assert!(thread.arguments.is_none());
        let decision: DecisionRequest =
            parse(&json!({ "decision": "approve", "arguments_sha256": SHA, "reason": null })).unwrap();
        assert_eq!((decision.decision, decision.reason), (Decision::Approve, None));
    }
}
