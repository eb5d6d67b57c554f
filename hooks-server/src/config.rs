//! Limits and timings of a server: [`ServerConfig`].

use std::time::Duration;

use crate::hook_runs::HookRuns;

/// Limits and timings of a [`router_with`](crate::router_with).
///
/// ```
/// use std::time::Duration;
/// use hooks_server::ServerConfig;
///
/// let config = ServerConfig { event_retention: 4096, keep_alive: Duration::from_secs(5), ..ServerConfig::default() };
/// assert_eq!(config.max_body_bytes, 256 * 1024);
/// ```
#[derive(Debug, Clone)]
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
    /// lists every agent of the runtime. Any agent of the runtime can be read by name at
    /// `GET /agents/{name}` and used in a thread either way.
    pub catalog: Vec<String>,
    /// Where the runtime's hook spans go (default none): with a [`HookRuns`] whose layer is in
    /// the `tracing` subscriber, each thread's event stream gets a `hook_run` event (hook id,
    /// kind, source, duration) per hook run of its runs, `hook_failed` when one failed, and
    /// `messages_filtered` (the message counts before and after) per `filter_messages` chain.
    /// Without it, `/inspect` shows the code that sets it up.
    pub hook_runs: Option<HookRuns>,
    /// The most user values one user may hold (default 100): a `PUT` of a new key beyond it is
    /// refused with 429 `too_many_user_values`; overwriting or deleting a key always works. The
    /// count is read before the write, so first writes of new keys that one user sends at the
    /// same moment can each pass it: the most a user holds is this plus such writes in flight.
    pub max_user_values: usize,
    /// The largest user value, in bytes of JSON (default 16 KiB); a larger one is refused with
    /// 413 `user_value_too_large`.
    pub max_user_value_bytes: usize,
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
            max_user_values: 100,
            max_user_value_bytes: 16 * 1024,
        }
    }
}
