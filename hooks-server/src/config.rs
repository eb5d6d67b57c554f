//! Limits and timings of a server: [`ServerConfig`].

use std::time::Duration;

use crate::hook_runs::HookRuns;

/// Limits and timings of a [`router_with`](crate::router_with).
///
/// ```
/// use std::time::Duration;
/// use hooks_server::ServerConfig;
///
/// let config = ServerConfig::default().event_retention(4096).keep_alive(Duration::from_secs(5));
/// assert_eq!(config.event_retention, 4096);
/// assert_eq!(config.max_body_bytes, 256 * 1024);
/// assert_eq!(config.max_queued_inputs, 16);
/// ```
///
/// Each field has a setter of its name that returns the changed config; a field can also be
/// assigned (`config.keep_alive = ...`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The largest request body read, in bytes (default 256 KiB); a larger one is refused with
    /// 413 `body_too_large`.
    pub max_body_bytes: usize,
    /// The largest message content sent to a thread, in bytes (default 64 KiB); a larger one is
    /// refused with 413 `message_too_large`.
    pub max_message_bytes: usize,
    /// How many events each thread (and each user) keeps for `Last-Event-ID` resumption
    /// (default 1,024). A client that reconnects after older events were dropped gets an
    /// `events_lost` event first, then everything still kept.
    pub event_retention: usize,
    /// How often an idle event stream sends a comment line (default 15 s): proxies keep the
    /// connection open, and a client that went away without closing is noticed at the next
    /// write at the latest.
    pub keep_alive: Duration,
    /// The agents `GET /agents` lists and an unknown-agent error names; empty (the default)
    /// lists every agent of the runtime. A name that is no agent of the runtime makes
    /// [`router_with`](crate::router_with) fail with
    /// [`ConfigError::UnknownCatalogAgent`](crate::ConfigError::UnknownCatalogAgent). Any agent of the runtime can be read by name at
    /// `GET /agents/{name}` and used in a thread either way.
    pub catalog: Vec<String>,
    /// Where the runtime's hook spans go (default none): with a [`HookRuns`] whose layer is in
    /// the `tracing` subscriber, each thread's event stream gets a `hook_run` event (hook id,
    /// kind, source, duration) per hook run of its runs, `hook_failed` when one failed, and
    /// `messages_filtered` (the message counts before and after) per `filter_messages` chain.
    /// Without it, `/inspect` shows the code that sets it up.
    pub hook_runs: Option<HookRuns>,
    /// How long a request body may take to arrive (default 30 s); a slower one is refused with
    /// 408 `body_timeout`, so a client trickling a body cannot hold a request open.
    pub body_read_timeout: Duration,
    /// How many threads one user may have (default 1,000); `POST /threads` past it answers 429
    /// `too_many_threads`. Counted from the store when this process first sees the user, then
    /// here: with several server processes, each one enforces it for the threads it creates.
    pub max_threads_per_user: usize,
    /// How many inputs one thread may have accepted and not yet finished, the running one
    /// included (default 16); `POST /threads/{id}/messages` past it answers 429 `queue_full`
    /// with `Retry-After: 1`, since a place frees up as each run finishes. The other 429s
    /// (`too_many_threads`, `too_many_user_values`) carry no `Retry-After`: waiting does not
    /// lift them, deleting or raising the limit does. Counted by this process: with several
    /// processes on one store, each accepts up to this many for a thread, so the inputs a thread
    /// has queued in the store can reach this times the number of processes.
    pub max_queued_inputs: usize,
    /// The largest `arguments` of a new thread, in bytes of JSON (default 16 KiB); a larger one
    /// is refused with 413 `arguments_too_large`. Arguments are in every `GET /threads` page.
    pub max_arguments_bytes: usize,
    /// How long a thread this server opened stays in memory with no event stream open, no run
    /// and no request (default 5 minutes). Then its event log and the task that fills it are
    /// dropped; the next request opens it again from the store, with a new event log (a client
    /// resuming from an older id gets `stream_reset`).
    pub thread_idle_eviction: Duration,
    /// The most user values one user may hold (default 100): a `PUT` of a new key beyond it is
    /// refused with 429 `too_many_user_values`; overwriting or deleting a key always works. The
    /// count is read before the write, so first writes of new keys that one user sends at the
    /// same moment can each pass it: the most a user holds is this plus such writes in flight.
    pub max_user_values: usize,
    /// The largest user value, in bytes of JSON (default 16 KiB); a larger one is refused with
    /// 413 `user_value_too_large`.
    pub max_user_value_bytes: usize,
    /// How many event streams (thread and user streams together) one user may have open at
    /// once (default 32); one more answers 429 `too_many_streams` with `Retry-After: 1`. Each
    /// stream holds a connection, so this keeps one user from taking the server's connections.
    pub max_streams_per_user: usize,
    /// How many connections one user may hold at once (default 64), counted on connections
    /// served by [`HttpServer`](crate::HttpServer) or [`serve`](crate::serve): a connection is
    /// the user's from its first authenticated request until it closes. A request that would
    /// make one more answers 429 `too_many_connections` and the connection is closed. Keep it
    /// well below [`HttpServer::max_connections`](crate::HttpServer::max_connections) (512 by
    /// default), so that one user's connections never fill the server.
    pub max_connections_per_user: usize,
    /// Whether a request's W3C `traceparent` may switch OpenTelemetry export off for the runs
    /// it starts (feature `otel`; default `false`). The request always joins the caller's
    /// trace; by default its sampled flag is taken as set, so a client cannot hide its runs
    /// from the operator's traces by sending flags `00`. Set it when the callers are trusted
    /// services whose sampling decision the traces should follow.
    pub honor_unsampled_traceparent: bool,
    /// Whether a user may remember an approval with scope `always` over HTTP (default `false`).
    /// An `always` approval answers the matching asks of every thread of the runtime, other
    /// users' included, so by default a decision asking for it is refused with 403
    /// `remember_scope_forbidden` and decides nothing; `thread` and `user` approvals reach only
    /// the caller's own threads. Set it when the server has one user, or its users are one team
    /// that shares a policy.
    pub allow_remember_always: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_body_bytes: 256 * 1024,
            max_message_bytes: 64 * 1024,
            event_retention: 1024,
            keep_alive: Duration::from_secs(15),
            catalog: Vec::new(),
            hook_runs: None,
            body_read_timeout: Duration::from_secs(30),
            max_threads_per_user: 1000,
            max_queued_inputs: 16,
            max_arguments_bytes: 16 * 1024,
            thread_idle_eviction: Duration::from_secs(300),
            max_user_values: 100,
            max_user_value_bytes: 16 * 1024,
            max_streams_per_user: 32,
            max_connections_per_user: 64,
            honor_unsampled_traceparent: false,
            allow_remember_always: false,
        }
    }
}

/// One setter per field, `ServerConfig::default().max_body_bytes(4096)`, each documented by the
/// field it sets.
macro_rules! setters {
    ($($field:ident: $type:ty),* $(,)?) => {
        impl ServerConfig {
            $(
                #[doc = concat!("The config with [`", stringify!($field), "`](ServerConfig::", stringify!($field), ") set to `value`.")]
                #[must_use]
                pub fn $field(mut self, value: $type) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters! {
    max_body_bytes: usize,
    max_message_bytes: usize,
    event_retention: usize,
    keep_alive: Duration,
    catalog: Vec<String>,
    hook_runs: Option<HookRuns>,
    body_read_timeout: Duration,
    max_threads_per_user: usize,
    max_queued_inputs: usize,
    max_arguments_bytes: usize,
    thread_idle_eviction: Duration,
    max_user_values: usize,
    max_user_value_bytes: usize,
    max_streams_per_user: usize,
    max_connections_per_user: usize,
    honor_unsampled_traceparent: bool,
    allow_remember_always: bool,
}
