//! The user's own endpoints: the user event stream, whose connections are the user's clients
//! (`user_client_attached` / `user_client_detached`), and user values (`user_value_changed`).
//!
//! The user stream is server-sent events rather than a WebSocket: it only flows from server to
//! client (a client writes through the plain endpoints), `EventSource` reconnects and resumes by
//! `Last-Event-ID` on its own, it passes through HTTP proxies and needs no extra dependency.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::{Extension, Json};
use hooks_runtime::Runtime;
use serde_json::Value;

use crate::auth::User;
use crate::body::AnyJson;
use crate::dto::events::StreamEvent;
use crate::dto::users::{UserValueList, UserValueView};
use crate::error::{ApiError, printable};
use crate::event_log::EventLog;
use crate::state::AppState;
use crate::streams;
use crate::user_limits::UserLimits;

/// The longest user value key, in bytes.
const MAX_KEY_BYTES: usize = 256;

/// `GET /user/events`: the connection is a client of the user. Opening it runs the
/// `user_client_attached` hooks before the response starts; the stream ending for any reason
/// (the client closing it, the connection dropping, the server shutting down) runs
/// `user_client_detached` once.
pub(crate) async fn events(
    State(state): State<AppState>,
    Extension(limits): Extension<Arc<UserLimits>>,
    User(user): User,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Result<impl IntoResponse, ApiError> {
    let log = state.user_log(&user);
    let cursor = streams::start_cursor(&headers, params.get("lastEventId").map(String::as_str), &log)?;
    // Taken before the client attaches: a refused stream runs no hook.
    let slot = limits.open_stream(&user)?;
    let client_id = crate::ids::client_id();
    // Made before attaching: if this request is dropped while the attach hooks run, the
    // detach still follows.
    let client = Client {
        runtime: state.runtime.clone(),
        user: user.clone(),
        client_id: client_id.clone(),
        log: log.clone(),
        handle: tokio::runtime::Handle::current(),
    };
    state.runtime.attach_client(&user, &client_id).await;
    log.push(&StreamEvent::ClientAttached { client_id: client_id.clone() });
    Ok(streams::sse(log, cursor, state.config.keep_alive, (client, slot)))
}

/// One connected client of a user; dropping it detaches the client.
struct Client {
    runtime: Runtime,
    user: String,
    client_id: String,
    log: Arc<EventLog>,
    handle: tokio::runtime::Handle,
}

impl Drop for Client {
    fn drop(&mut self) {
        let runtime = self.runtime.clone();
        let user = std::mem::take(&mut self.user);
        let client_id = std::mem::take(&mut self.client_id);
        let log = self.log.clone();
        // Drop cannot wait for the hooks; they run on the runtime the client attached on.
        self.handle.spawn(async move {
            runtime.detach_client(&user, &client_id).await;
            log.push(&StreamEvent::ClientDetached { client_id });
        });
    }
}

fn checked_key(key: &str) -> Result<(), ApiError> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES || key.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "invalid_key",
            format!(
                "user value key `{}` must be 1 to {MAX_KEY_BYTES} bytes without control characters",
                printable(key)
            ),
        ));
    }
    Ok(())
}

/// `GET /user/values`: every value of the caller, ordered by key, each with the time it was
/// last set: `{"values": [{"key", "value", "updatedAt"}]}`.
pub(crate) async fn list_values(
    State(state): State<AppState>,
    User(user): User,
) -> Result<Json<UserValueList>, ApiError> {
    let values = state.runtime.user_values(&user).await.map_err(|error| ApiError::store(&error))?;
    Ok(Json(UserValueList { values: values.into_iter().map(UserValueView::from).collect() }))
}

/// `GET /user/values/{key}`: the caller's value, 404 when it is not set.
pub(crate) async fn get_value(
    State(state): State<AppState>,
    User(user): User,
    Path(key): Path<String>,
) -> Result<Json<UserValueView>, ApiError> {
    checked_key(&key)?;
    let values = state.runtime.user_values(&user).await.map_err(|error| ApiError::store(&error))?;
    match values.into_iter().find(|value| value.key == key) {
        Some(value) => Ok(Json(UserValueView::from(value))),
        None => {
            Err(ApiError::new(StatusCode::NOT_FOUND, "value_not_found", format!("no user value `{}`", printable(&key))))
        }
    }
}

/// `PUT /user/values/{key}` with the value as the JSON body: runs `user_value_changed`.
///
/// Within the quotas of [`ServerConfig`](crate::ServerConfig): a value longer than
/// `max_user_value_bytes` is 413 `user_value_too_large`, a new key beyond `max_user_values` is
/// 429 `too_many_user_values`; each names the limit.
pub(crate) async fn put_value(
    State(state): State<AppState>,
    User(user): User,
    Path(key): Path<String>,
    AnyJson(value): AnyJson,
) -> Result<StatusCode, ApiError> {
    checked_key(&key)?;
    check_quotas(&state, &user, &key, &value).await?;
    set_value(&state, &user, &key, Some(value.clone())).await?;
    state.user_log(&user).push(&StreamEvent::ValueChanged { key, value: Some(value) });
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /user/values/{key}`: runs `user_value_changed` with no new value.
pub(crate) async fn delete_value(
    State(state): State<AppState>,
    User(user): User,
    Path(key): Path<String>,
) -> Result<StatusCode, ApiError> {
    checked_key(&key)?;
    set_value(&state, &user, &key, None).await?;
    state.user_log(&user).push(&StreamEvent::ValueChanged { key, value: None });
    Ok(StatusCode::NO_CONTENT)
}

async fn set_value(state: &AppState, user: &str, key: &str, value: Option<Value>) -> Result<(), ApiError> {
    state.runtime.set_user_value(user, key, value).await.map(drop).map_err(|error| ApiError::store(&error))
}

/// The user value quotas. The count is read before the write, so concurrent first writes of
/// new keys by one user can each pass it: the most a user can hold is the limit plus the writes
/// in flight at once.
async fn check_quotas(state: &AppState, user: &str, key: &str, value: &Value) -> Result<(), ApiError> {
    let limits = &state.config;
    let bytes = serde_json::to_vec(value).map_or(usize::MAX, |json| json.len());
    if bytes > limits.max_user_value_bytes {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "user_value_too_large",
            format!(
                "user value `{}` is {bytes} bytes of JSON; the limit is {} bytes (`ServerConfig::max_user_value_bytes`)",
                printable(key),
                limits.max_user_value_bytes
            ),
        ));
    }
    let values = state.runtime.user_values(user).await.map_err(|error| ApiError::store(&error))?;
    if values.len() >= limits.max_user_values && !values.iter().any(|stored| stored.key == key) {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_user_values",
            format!(
                "the user already has {} user values, the limit (`ServerConfig::max_user_values`); delete one \
                 (`DELETE /user/values/{{key}}`) or overwrite an existing key",
                values.len()
            ),
        ));
    }
    Ok(())
}
