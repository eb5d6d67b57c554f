//! The user's own endpoints: the user event stream, whose connections are the user's clients
//! (`user_client_attached` / `user_client_detached`), and user values (`user_value_changed`).
//!
//! The user stream is server-sent events rather than a WebSocket: it only flows from server to
//! client (a client writes through the plain endpoints), `EventSource` reconnects and resumes by
//! `Last-Event-ID` on its own, it passes through HTTP proxies and needs no extra dependency.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use hooks_runtime::Runtime;
use serde_json::{Value, json};

use crate::auth::User;
use crate::body::JsonBody;
use crate::error::{ApiError, printable};
use crate::event_log::EventLog;
use crate::state::AppState;
use crate::streams;

/// The longest user value key, in bytes.
const MAX_KEY_BYTES: usize = 256;

/// `GET /user/events`: the connection is a client of the user. Opening it runs the
/// `user_client_attached` hooks before the response starts; the stream ending for any reason
/// (the client closing it, the connection dropping, the server shutting down) runs
/// `user_client_detached` once.
pub(crate) async fn events(
    State(state): State<AppState>,
    User(user): User,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Result<impl IntoResponse, ApiError> {
    let log = state.user_log(&user);
    let cursor = streams::start_cursor(&headers, params.get("lastEventId").map(String::as_str), &log)?;
    let client_id = format!("client_{}", next_client_number());
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
    log.push(&json!({ "type": "client_attached", "clientId": client_id }));
    Ok(streams::sse(log, cursor, state.config.keep_alive, client))
}

fn next_client_number() -> String {
    static CLIENTS: AtomicU64 = AtomicU64::new(0);
    let started =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis());
    format!("{started:x}_{}", CLIENTS.fetch_add(1, Ordering::Relaxed) + 1)
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
            log.push(&json!({ "type": "client_detached", "clientId": client_id }));
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

/// `GET /user/values/{key}`: the caller's value, 404 when it is not set.
pub(crate) async fn get_value(
    State(state): State<AppState>,
    User(user): User,
    Path(key): Path<String>,
) -> Result<Json<Value>, ApiError> {
    checked_key(&key)?;
    match state.runtime.user_value(&user, &key) {
        Some(value) => Ok(Json(json!({ "key": key, "value": value }))),
        None => {
            Err(ApiError::new(StatusCode::NOT_FOUND, "value_not_found", format!("no user value `{}`", printable(&key))))
        }
    }
}

/// `PUT /user/values/{key}` with the value as the JSON body: runs `user_value_changed`.
pub(crate) async fn put_value(
    State(state): State<AppState>,
    User(user): User,
    Path(key): Path<String>,
    JsonBody(value): JsonBody,
) -> Result<StatusCode, ApiError> {
    checked_key(&key)?;
    state.runtime.set_user_value(&user, &key, Some(value.clone())).await;
    state.user_log(&user).push(&json!({ "type": "value_changed", "key": key, "value": value }));
    Ok(StatusCode::NO_CONTENT)
}

/// `DELETE /user/values/{key}`: runs `user_value_changed` with no new value.
pub(crate) async fn delete_value(
    State(state): State<AppState>,
    User(user): User,
    Path(key): Path<String>,
) -> Result<StatusCode, ApiError> {
    checked_key(&key)?;
    state.runtime.set_user_value(&user, &key, None).await;
    state.user_log(&user).push(&json!({ "type": "value_changed", "key": key, "value": null }));
    Ok(StatusCode::NO_CONTENT)
}
