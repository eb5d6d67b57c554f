//! Thread endpoints: create, list, read, messages, send, and the thread's event stream.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use hooks_runtime::store::ThreadStatus;
use hooks_runtime::types::MessageQuery;
use hooks_runtime::{RuntimeError, ThreadOptions};

use crate::auth::User;
use crate::body::{AnyJson, JsonBody};
use crate::dto::events::StreamEvent;
use crate::dto::threads::{MessageList, NewMessage, NewThread, RunAccepted, ThreadPage};
use crate::error::{ApiError, printable};
use crate::state::AppState;
use crate::streams;
use crate::user_limits::UserLimits;

/// `POST /threads` `{"agent": "...", "arguments": {...}}`: a thread of the caller.
pub(crate) async fn create(
    State(state): State<AppState>,
    User(user): User,
    JsonBody(NewThread { agent, arguments }): JsonBody<NewThread>,
) -> Result<impl IntoResponse, ApiError> {
    let arguments = arguments.unwrap_or_default();
    let size = serde_json::to_vec(&arguments).map_or(usize::MAX, |json| json.len());
    let limit = state.config.max_arguments_bytes;
    if size > limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "arguments_too_large",
            format!(
                "the thread arguments are {size} bytes of JSON; the limit is {limit} bytes \
                 (ServerConfig::max_arguments_bytes)"
            ),
        ));
    }
    // Creations of one user take turns, so that two at once cannot both pass the quota.
    let count = state.thread_count(&user);
    let mut count = count.lock().await;
    let threads = match *count {
        Some(threads) => threads,
        None => state.runtime.store().threads_of_user(&user).await.map_err(|error| ApiError::store(&error))?.len(),
    };
    *count = Some(threads);
    let limit = state.config.max_threads_per_user;
    if threads >= limit {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_threads",
            format!(
                "this user has {threads} threads; the limit is {limit} (ServerConfig::max_threads_per_user); \
                 the operator can raise it"
            ),
        ));
    }
    let options = ThreadOptions::new().user(user.clone()).arguments(arguments);
    let thread = match state.runtime.create_thread(&agent, options.clone()).await {
        Ok(thread) => thread,
        Err(RuntimeError::UnknownAgent(_)) => return Err(unknown_agent(&state, &agent)),
        Err(RuntimeError::MissingArgument { agent, prompt, argument }) => {
            return Err(ApiError::bad_request(
                "missing_argument",
                format!(
                    "prompt `{prompt}` of agent `{agent}` uses `{{{{{argument}}}}}`; add `\"{argument}\"` to the request's `arguments`"
                ),
            ));
        }
        Err(error) => return Err(ApiError::store(&error)),
    };
    *count = Some(threads + 1);
    drop(count);
    // The record as stored, with the creation time the runtime chose.
    let record = match state.runtime.store().load_thread(thread.id()).await {
        Ok(Some(record)) => record,
        Ok(None) => {
            return Err(ApiError::store(&format_args!("thread `{}` missing right after its creation", thread.id())));
        }
        Err(error) => return Err(ApiError::store(&error)),
    };
    let entry = state.register(thread, record).await;
    state.user_log(&user).push(&StreamEvent::ThreadCreated { thread_id: entry.record.id.clone(), agent });
    Ok((StatusCode::CREATED, Json(entry.view()).into_response()))
}

fn unknown_agent(state: &AppState, agent: &str) -> ApiError {
    let known: Vec<String> = crate::catalog::agent_names(state).iter().map(|name| format!("`{name}`")).collect();
    let mut message = format!("no agent named `{}`", printable(agent));
    if !known.is_empty() {
        message.push_str(&format!("; the agents are {}", known.join(", ")));
    }
    ApiError::bad_request("unknown_agent", message)
}

/// `GET /threads?limit=N&cursor=C`: a page of the caller's threads in the store, oldest first,
/// and the cursor of the next page (`null` after the last).
pub(crate) async fn list(
    State(state): State<AppState>,
    User(user): User,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let page = crate::paging::PageQuery::parse(&params)?;
    let (entries, next) = state.threads_of(&user, &page).await?;
    let threads = entries.iter().map(crate::state::Listed::view).collect();
    Ok(Json(ThreadPage { threads, next }).into_response())
}

/// `GET /threads/{id}`.
pub(crate) async fn read(
    State(state): State<AppState>,
    User(user): User,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.thread_of(&user, &id).await?.view()).into_response())
}

/// `GET /threads/{id}/messages?limit=N&includeSilent=true`: as `ThreadState::get_messages`
/// selects them ([`MessageQuery`]), oldest first.
pub(crate) async fn messages(
    State(state): State<AppState>,
    User(user): User,
    Path(id): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Result<Json<MessageList>, ApiError> {
    let query = message_query(&params)?;
    let entry = state.thread_of(&user, &id).await?;
    let history = entry.thread.messages().await.map_err(|error| ApiError::store(&error))?;
    Ok(Json(MessageList { messages: query.select(history) }))
}

fn message_query(params: &HashMap<String, String>) -> Result<MessageQuery, ApiError> {
    let mut query = MessageQuery::default();
    for (name, value) in params {
        match name.as_str() {
            "limit" => {
                query.limit = Some(value.parse().map_err(|_| {
                    ApiError::bad_request("invalid_query", "query parameter `limit` must be a whole number")
                })?);
            }
            "includeSilent" => {
                query.include_silent = match value.as_str() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => {
                        return Err(ApiError::bad_request(
                            "invalid_query",
                            "query parameter `includeSilent` must be `true` or `false`",
                        ));
                    }
                };
            }
            // The server's names are camelCase; the Rust field's spelling is refused by name.
            "include_silent" => {
                return Err(ApiError::bad_request(
                    "invalid_query",
                    "query parameter `include_silent` is spelled `includeSilent` (the server's names are camelCase)",
                ));
            }
            other => {
                return Err(ApiError::bad_request(
                    "invalid_query",
                    format!(
                        "unknown query parameter `{}`; the parameters are `limit` and `includeSilent`",
                        printable(other)
                    ),
                ));
            }
        }
    }
    Ok(query)
}

/// `POST /threads/{id}/messages` `{"content": "..."}`: starts a run and answers at once with
/// its id. The run's progress and end arrive on the thread's event stream (`run_started`,
/// the runtime's events, `run_finished`); runs of one thread take turns. A thread whose tool
/// calls wait for approvals refuses it with 409 `awaiting_approval`, naming them.
pub(crate) async fn send(
    State(state): State<AppState>,
    User(user): User,
    Path(id): Path<String>,
    AnyJson(body): AnyJson,
) -> Result<impl IntoResponse, ApiError> {
    // The thread first: a body for another user's thread gets that thread's 404, whatever it is.
    let entry = state.thread_of(&user, &id).await?;
    let NewMessage { content } = crate::body::parse(&body)?;
    let limit = state.config.max_message_bytes;
    if content.len() > limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "message_too_large",
            format!("the message content is {} bytes; the limit is {limit} bytes", content.len()),
        ));
    }
    // A5: refused before anything is stored; the runtime would refuse the run, but only after
    // the message was in the inbox and the 202 sent.
    crate::approvals::refuse_while_waiting(&entry).await?;
    let slot = entry.take_queue_slot(state.config.max_queued_inputs)?;
    // Accepted means committed: the 202 and its run id come only after the message is in the
    // thread's inbox, so a crash from here on loses nothing (recovery runs it).
    let message = hooks_runtime::types::MessageRecord::new(hooks_runtime::types::Role::User, content);
    let input = entry.thread.queue_message(message).await.map_err(|error| ApiError::store(&error))?;
    let run_id = input.to_string();
    crate::runs::spawn(entry, slot, run_id.clone(), move |entry| async move { entry.thread.run_input(&input).await });
    Ok((StatusCode::ACCEPTED, Json(RunAccepted { run_id })))
}

/// `GET /threads/{id}/events`: server-sent events, each with an id; resumes after
/// `Last-Event-ID` (or `?lastEventId=`) while the event is retained.
pub(crate) async fn events(
    State(state): State<AppState>,
    Extension(limits): Extension<Arc<UserLimits>>,
    User(user): User,
    Path(id): Path<String>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Result<impl IntoResponse, ApiError> {
    let entry = state.thread_of(&user, &id).await?;
    let cursor = streams::start_cursor(&headers, params.get("lastEventId").map(String::as_str), &entry.events.log)?;
    let slot = limits.open_stream(&user)?;
    Ok(streams::sse(entry.events.log.clone(), cursor, state.config.keep_alive, slot))
}

/// `POST /threads/{id}/abort`: fires the abort signal of the thread's running execution; the
/// run stops before its next step (`run_finished` with status `stopped`, reason `aborted`).
/// With no run going (none running or waiting for approvals, none holding the thread's turn
/// here), 409 `not_running`: there is nothing to stop, and a 202 would say something will.
pub(crate) async fn abort(
    State(state): State<AppState>,
    User(user): User,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let entry = state.thread_of(&user, &id).await?;
    let status = entry.thread.status();
    let running = matches!(status, ThreadStatus::Running | ThreadStatus::AwaitingApproval);
    if !running && !entry.run_gate.is_taken() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "not_running",
            format!(
                "thread `{}` has no run going (status `{}`); there is nothing to abort",
                printable(&id),
                status.as_str()
            ),
        ));
    }
    entry.thread.abort();
    Ok(StatusCode::ACCEPTED)
}
