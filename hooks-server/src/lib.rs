//! An [`axum`] router over a hooks [`Runtime`]: threads and their messages as JSON, resumable
//! thread and user event streams (server-sent events), user-scope hooks fired by real
//! connections, and the agent catalog.
//!
//! ```no_run
//! use hooks_runtime::Runtime;
//! use hooks_server::StaticTokens;
//!
//! # async fn serve(runtime: Runtime) -> std::io::Result<()> {
//! let auth = StaticTokens::new([("dev-token", "alice")]);
//! let app = axum::Router::new().nest("/api", hooks_server::router(runtime, auth));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! // Not `axum::serve`: this one bounds header reads, idle connections and their number.
//! hooks_server::serve(listener, app).await
//! # }
//! ```
//!
//! # Endpoints
//!
//! Every request carries `Authorization: Bearer <token>`; the [`Authenticator`] maps the token
//! to a user id. A user reads and writes only their own threads and values: another user's
//! thread answers 404 exactly as a missing one does.
//!
//! | Method and path | What it does |
//! |---|---|
//! | `GET /agents` | the catalog: `explain_json` of each agent in [`ServerConfig::catalog`], with `arguments`, the names of its prompts' `{{name}}` placeholders (which `POST /threads` needs) |
//! | `GET /agents/{name}` | one agent's resolved hooks (`explain_json`) and `arguments` |
//! | `POST /threads` | `{"agent", "arguments"?}` → 201, the new thread of the caller |
//! | `GET /threads` | `?limit=N&cursor=C`: a page of the caller's threads in the store, oldest first (also those of another process, or from before a restart): `{"threads": [...], "next": C}`; `limit` is 100 by default and at most 1,000, `next` is the `cursor` of the following page, `null` after the last |
//! | `GET /threads/{id}` | the thread: `id`, `agent`, `userId`, `createdAt`, `arguments`, `status`, `reason`?, `lastEventId` |
//! | `GET /threads/{id}/messages` | `?limit=N&includeSilent=true` as [`MessageQuery`](hooks_runtime::types::MessageQuery) selects |
//! | `POST /threads/{id}/messages` | `{"content"}` → 202 `{"runId"}` at once; the run goes on; 409 `awaiting_approval` naming the calls while tool calls wait for approvals |
//! | `GET /threads/{id}/approvals` | the tool calls that wait for a person: `{"approvals": [{"id", "name", "arguments", "reasons": [{"hook", "reason"}], "requestedAt"}]}`, in the model's call order; `hook` is `null` when the tool itself requires approval |
//! | `POST /threads/{id}/approvals/{callId}` | `{"decision": "approve" \| "deny", "arguments_sha256", "reason"?, "arguments"?, "remember"?}` (`reason` with a denial, edited `arguments` and `remember` with an approval; `arguments_sha256` as the listing gave it, 409 `stale_approval` when the call waits with other arguments; `remember`: `{"scope": "once" \| "thread" \| "user" \| "always", "pattern"?}` keeps the approval for later calls of that scope, with the exact arguments or the calls a permission rule `pattern` such as `Bash(npm test:*)` selects, 400 `invalid_remember` for a pattern that does not parse or does not select the call, and the answer's `remembered` is what was kept) → 202 `{"callId", "decision", "runId", "pending": []}` when it was the step's last decision: the resumed turn runs on as a message's run does; 200 with `runId` `null` and the calls still waiting in `pending` otherwise. 404 `approval_not_found` for a call that does not wait, 409 `already_decided` naming its state, 422 `invalid_arguments` for edited arguments the tool's schema refuses; the body limits of every route apply, and the resumed run counts among the thread's queued inputs (429 `queue_full`) |
//! | `GET /approvals/remembered` | the caller's remembered approvals (made on the caller's threads), oldest first: `{"remembered": [{"id", "scope", "tool", "matcher": {"kind": "arguments", "sha256"} \| {"kind": "pattern", "rule"}, "threadId", "createdAt", "createdBy"}]}` |
//! | `DELETE /approvals/remembered/{id}` | 204: revokes the caller's remembered approval; later calls it answered wait for a person again. Another user's, like a missing one, is 404 `remembered_approval_not_found` |
//! | `POST /threads/{id}/abort` | 202; the running execution stops before its next step. 409 `not_running` when no run is going (the thread idle, stopped or failed) |
//! | `GET /threads/{id}/events` | SSE: `run_started`, `message_created` (with the `message`), `tool_call_started` (with `progress`), `tool_call_done` (`"denied": true` for a denied call), `approval_requested`, `approval_resolved`, `status`, custom events, `hook_run`, `hook_failed`, `messages_filtered` (`{"before", "after"}`, the message counts around a `filter_messages` chain), `model_call` and `tool_run` (the last five with [`ServerConfig::hook_runs`]; `hook_run`, `model_call` and `tool_run` with `runId`, `startedAtUs` and `durationUs`, see [`HookRuns`]), `run_finished`; `run_started` and `run_finished` with `atUs` (microseconds since the Unix epoch) |
//! | `GET /user/events` | SSE: this connection is a client of the user (`user_client_attached` on open, `user_client_detached` on close); `client_attached`, `client_detached`, `value_changed`, `thread_created` |
//! | `GET /user/values` | every value of the caller: `{"values": [{"key", "value", "updatedAt"}]}`, ordered by key |
//! | `GET`, `PUT`, `DELETE /user/values/{key}` | the caller's user value (`{"key", "value", "updatedAt"}`), kept in the store; `PUT` (the value as the JSON body, within [`ServerConfig::max_user_values`] and [`ServerConfig::max_user_value_bytes`]) and `DELETE` run `user_value_changed` |
//! | `GET /inspect` | feature `inspector` (default): a page showing each catalog agent's resolved hooks (side, kind, order, provenance, stage and reason), a thread's messages and its live events, hook runs with their durations among them, each turn as a timeline (runs, model calls, tool calls, approval waits and hook runs, from their start for their duration), and the tool calls that wait for approval with Approve (with a scope and an optional pattern to remember the approval) and Deny controls (denials marked among the events), and the caller's remembered approvals with Revoke; it asks for a token and fetches like any client. Opening a thread loads its earlier events (within [`ServerConfig::event_retention`]) and its messages with tool-call arguments and results; the thread list, the thread's arguments and the user's values show their times. Without [`ServerConfig::hook_runs`] and its layer the page shows the code that records hook runs |
//! | `GET /inspect/status` | feature `inspector`: `{"hookRuns": "recording" \| "not_configured" \| "no_layer"}`, what the page tells about hook runs |
//!
//! # JSON names
//!
//! Shapes the specification defines keep its spelling: a message (`HookMessage`, in
//! `GET /threads/{id}/messages` and in `message_created` events) is snake_case, as the spec's
//! `HookMessage` is (`tool_calls`, `tool_call_id`, `created_at`), with its types: `tool_calls`
//! is, as there, the tool-call array encoded in a string (a client parses it: `[{"id", "type":
//! "function", "function": {"name", "arguments"}}]`). A hook's `source` is the
//! spec's camelCase `HookSource` (`promptName`). Every other name the server chooses is
//! camelCase: fields (`userId`, `createdAt`, `lastEventId`, `runId`, `exposeAsTool`,
//! `parentHooks`, `optionalRelationship`), the catalog's per-side keys (`sideA`, `sideB`,
//! `atRest`) and query parameters (`includeSilent`, `lastEventId`). Values are not names and keep
//! their own spelling: hook kinds (`filter_messages`, also as the keys of a side's `hooks`),
//! event types (`message_created`), statuses and reasons (`model_error`), stages
//! (`before_parent`) and error codes (`unknown_agent`).
//!
//! # Event streams
//!
//! Each event carries an `id:` (1, 2, 3... per thread, and per user) and a JSON `data:` with a
//! `type`. A client that reconnects with `Last-Event-ID` (or `?lastEventId=`, for a first
//! connection) gets every event after that id, none twice, while the server still keeps it:
//! the last [`ServerConfig::event_retention`] events of each thread and each user, in memory.
//! Past that, the stream starts with `{"type":"events_lost","count":N}` (no id), `N` the
//! number of events the client will never get, and goes on with what is kept; refetch the
//! messages then. The server never falls behind a thread's runtime itself: its log takes
//! every event of the thread ([`Thread::subscribe_unbounded`](hooks_runtime::Thread::subscribe_unbounded)).
//! Without an id, a stream starts with what
//! happens next; `lastEventId` of `GET /threads/{id}` read before the messages closes the gap.
//!
//! Event ids live in this process's memory: after a restart they begin again, and a client
//! whose `Last-Event-ID` is past a stream's end gets `{"type":"stream_reset"}` and the stream
//! from its start. A client stays with one server process for a stream's ids to mean anything.
//!
//! # Several server processes
//!
//! With a store that carries thread events between processes
//! ([`MessageStore::event_log`](hooks_runtime::store::MessageStore::event_log), the
//! PostgreSQL store), a thread's stream on any process shows the runs of every process: once
//! a process has opened the thread (its first request for it), it follows the thread's events
//! in the store ([`EventLog::subscribe_events`](hooks_runtime::store::EventLog::subscribe_events))
//! instead of its own runtime's, each once and in the store's order (by the store's sequence
//! numbers, so also across lost database connections and retried writes), and
//! `GET /threads/{id}` reports the status the latest run left. What the store carries is the
//! runtime's events (messages, tool calls, status, custom events); `run_started`, `run_finished`
//! and hook runs are events of the process that ran, and show only there, `run_finished` after
//! every event of its run. The PostgreSQL store listens for every thread on one connection.
//!
//! # Tasks
//!
//! Building a router starts nothing. Its first request starts the tasks that run beside the
//! requests: the follower of other processes' user changes and a recovery of the runs a stopped
//! process left ([`Runtime::recover`], also the runtime's own doing at its first use of a
//! thread; call it before serving to recover before any request). Each thread served has a task
//! that logs its events, and the first starts the eviction of idle threads. No task keeps the
//! router's state alive: each ends once it finds the router gone.
//!
//! # Bounds
//!
//! [`serve`] and [`HttpServer`] bound header reads, idle connections and their number;
//! [`ServerConfig`] bounds what one user holds (threads, queued inputs, argument sizes, body
//! read time, open event streams and connections) and how long an unused thread stays in
//! memory. The per-user streams and connections keep one user from taking the server's
//! connections from every other: past them a request answers 429 `too_many_streams` or
//! `too_many_connections` (and that connection is closed).
//!
//! A user's stream on any process shows the other processes' changes of that user's values and
//! the threads they create for the user (`value_changed`, `thread_created`), each once, from
//! the process's first user stream on; and every process reads user values from the store.
//!
//! # Errors
//!
//! Every error is `{"error": {"code", "message"}}` with a 4xx status naming what was wrong
//! (`invalid_json`, `body_too_large`, `message_too_large`, `unknown_agent`, `unknown_field`,
//! `thread_not_found`, `invalid_cursor`, `arguments_too_large` 413, `body_timeout` 408,
//! `awaiting_approval`, `already_decided` and `not_running` 409, `invalid_arguments` 422,
//! `too_many_threads`, `queue_full`, `too_many_streams` and `too_many_connections` 429, ...); a limit's error names the limit and the
//! [`ServerConfig`] field that raises it. No error text carries message contents: a body's value is never
//! echoed, only its field name and JSON type.

mod approvals;
mod auth;
mod body;
mod catalog;
mod config;
mod config_error;
mod dto;
mod error;
mod event_log;
mod event_log_writer;
mod hook_runs;
mod ids;
#[cfg(feature = "inspector")]
mod inspector;
mod paging;
mod runs;
mod serve;
mod state;
mod streams;
mod thread_entry;
mod threads;
#[cfg(feature = "otel")]
mod trace_context;
mod user_changes;
mod user_limits;
mod users;

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, StatusCode, Uri};
use axum::routing::{delete, get, post};
use hooks_runtime::Runtime;

pub use async_trait::async_trait;
pub use auth::{Authenticator, StaticTokens};
pub use config::ServerConfig;
pub use config_error::ConfigError;
pub use hook_runs::{HookRunLayer, HookRuns};
pub use serve::{HttpServer, serve, serve_with_shutdown};

use error::{ApiError, printable};
use state::AppState;
use user_limits::UserLimits;

/// Not public API: what the tests in `tests/` read of the server's internals (feature
/// `__private`, which hooks-server's own dev-dependency on itself turns on).
#[cfg(feature = "__private")]
#[doc(hidden)]
pub mod __private {
    pub use crate::event_log_writer::running_event_log_writers;
    pub use crate::thread_entry::open_thread_entries;
}

/// The router of `runtime` with the default [`ServerConfig`].
///
/// Building it starts nothing; see [`router_with`] for the tasks its first request starts.
pub fn router(runtime: Runtime, auth: impl Authenticator) -> Router {
    // The default config names no agent, so there is nothing to refuse.
    router_with(runtime, auth, ServerConfig::default()).expect("the default ServerConfig fits every runtime")
}

/// The router of `runtime` with these limits and timings.
///
/// Building it starts no task and needs no tokio runtime. Serving does: the router's first
/// request starts, once, the follower of other processes' user changes and a recovery of the
/// runs a stopped process left ([`Runtime::recover`], which the runtime also does at its first
/// use of a thread); each thread served gets a task that logs its events, and the first one
/// starts the eviction of idle threads. To recover before the first request, call
/// [`Runtime::recover`] before serving:
///
/// ```no_run
/// # use hooks_runtime::Runtime;
/// # async fn start(runtime: Runtime) -> Result<(), Box<dyn std::error::Error>> {
/// runtime.recover().await?;
/// let app = hooks_server::router_with(runtime, hooks_server::StaticTokens::default(), Default::default())?;
/// # let _ = app;
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// [`ConfigError::UnknownCatalogAgent`] when [`ServerConfig::catalog`] names an agent the
/// runtime does not have (the error names it and lists the runtime's agents).
pub fn router_with(runtime: Runtime, auth: impl Authenticator, config: ServerConfig) -> Result<Router, ConfigError> {
    catalog::check(&runtime, &config.catalog)?;
    let body_limit = config.max_body_bytes;
    #[cfg(feature = "otel")]
    let honor_unsampled = config.honor_unsampled_traceparent;
    let limits = UserLimits::new(config.max_streams_per_user, config.max_connections_per_user);
    let state = AppState::new(runtime, Arc::new(auth), config);
    let router = Router::new()
        .route("/agents", get(catalog::list))
        .route("/agents/{name}", get(catalog::read))
        .route("/threads", get(threads::list).post(threads::create))
        .route("/threads/{id}", get(threads::read))
        .route("/threads/{id}/messages", get(threads::messages).post(threads::send))
        .route("/threads/{id}/events", get(threads::events))
        .route("/threads/{id}/abort", post(threads::abort))
        .route("/threads/{id}/approvals", get(approvals::list))
        .route("/threads/{id}/approvals/{call_id}", post(approvals::decide))
        .route("/approvals/remembered", get(approvals::list_remembered))
        .route("/approvals/remembered/{id}", delete(approvals::revoke_remembered))
        .route("/user/events", get(users::events))
        .route("/user/values", get(users::list_values))
        .route("/user/values/{key}", get(users::get_value).put(users::put_value).delete(users::delete_value))
        .layer(DefaultBodyLimit::max(body_limit));
    #[cfg(feature = "inspector")]
    let router = router
        .route("/inspect", get(inspector::page))
        .route("/inspect/status", get(inspector::status))
        .route("/inspect/mcp", get(inspector::mcp));
    #[cfg(feature = "otel")]
    let router = router.layer(axum::middleware::from_fn(move |request, next| {
        trace_context::continue_trace(honor_unsampled, request, next)
    }));
    let router = router.layer(axum::middleware::from_fn_with_state(state.clone(), start_background_tasks));
    Ok(router
        .layer(Extension(limits))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state))
}

/// The middleware that starts the router's background tasks at its first request.
async fn start_background_tasks(
    axum::extract::State(state): axum::extract::State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    state.start_background_tasks();
    next.run(request).await
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no_such_endpoint", format!("no endpoint {method} {}", printable(uri.path())))
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} does not take {method}", printable(uri.path())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A router is built without a tokio runtime: building it spawns nothing (its first request
    /// starts its tasks).
    #[test]
    fn building_a_router_starts_no_task_and_needs_no_tokio_runtime() {
        let runtime = Runtime::builder().build().expect("runtime");
        let config = ServerConfig::default().catalog(Vec::new());
        let router = router_with(runtime, StaticTokens::default(), config).expect("router");
        drop(router);
    }
}
