//! How to connect: [`PostgresOptions`] and the default schema, [`DEFAULT_SCHEMA`].

use std::time::Duration;

/// The schema [`PostgresStore::connect`] keeps its tables in (created if absent), unless
/// [`PostgresOptions::schema`] or [`PostgresOptions::search_path`] says otherwise.
///
/// [`PostgresStore::connect`]: crate::store::PostgresStore::connect
pub const DEFAULT_SCHEMA: &str = "agent_hooks";

/// How to connect: the schema and the pool size. [`PostgresStore::connect`] uses the defaults:
/// the schema [`DEFAULT_SCHEMA`], at most 16 pooled connections.
///
/// ```
/// use hooks_runtime::store::PostgresOptions;
///
/// let options = PostgresOptions::new().schema("agents").max_connections(8);
/// assert_eq!(options.schema_name(), Some("agents"));
/// assert_eq!(PostgresOptions::new().schema_name(), Some("agent_hooks"));
/// assert_eq!(PostgresOptions::new().search_path().schema_name(), None);
/// ```
///
/// [`PostgresStore::connect`]: crate::store::PostgresStore::connect
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    pub(super) schema: Option<String>,
    pub(super) max_connections: usize,
    pub(super) event_poll_interval: Duration,
    pub(super) run_lease_ttl: Duration,
    pub(super) run_wait: Duration,
    pub(super) recovery_sweep: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            schema: Some(DEFAULT_SCHEMA.to_owned()),
            max_connections: 16,
            event_poll_interval: Duration::from_secs(5),
            run_lease_ttl: Duration::from_secs(15),
            run_wait: Duration::from_secs(300),
            recovery_sweep: Duration::from_secs(5),
        }
    }
}

impl PostgresOptions {
    /// The defaults: the schema [`DEFAULT_SCHEMA`], at most 16 pooled connections.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the store's tables in `schema` (created if missing; default [`DEFAULT_SCHEMA`]) by
    /// setting `search_path` on every connection. The name must be lower-case ASCII letters,
    /// digits and `_`, not start with a digit, and be at most 40 characters;
    /// [`PostgresStore::connect_with`] refuses others.
    ///
    /// [`PostgresStore::connect_with`]: crate::store::PostgresStore::connect_with
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// Keeps the store's tables wherever the connection's own `search_path` points (`public`,
    /// unless the URL's `options` or the role's settings say otherwise), creating no schema:
    /// for a database whose tables are already there.
    pub fn search_path(mut self) -> Self {
        self.schema = None;
        self
    }

    /// The schema the store will use, or `None` for the connection's `search_path`.
    pub fn schema_name(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// The most connections the pool opens (at least 1). Besides the pool, one connection holds
    /// the store's presence for as long as the store lives (so other processes know at once
    /// when this one dies), and while there are subscriptions ([`PostgresStore::subscribe`]) or
    /// user value changes are followed, one more listens for all of them.
    ///
    /// [`PostgresStore::subscribe`]: crate::store::PostgresStore::subscribe
    pub fn max_connections(mut self, max_connections: usize) -> Self {
        self.max_connections = max_connections.max(1);
        self
    }

    /// How often a subscription ([`PostgresStore::subscribe`]) reads the events table without
    /// a notification, in case one was lost with a connection (default 5 s). Events normally
    /// arrive by notification within milliseconds; this bounds the delay when one does not.
    ///
    /// [`PostgresStore::subscribe`]: crate::store::PostgresStore::subscribe
    pub fn event_poll_interval(mut self, interval: Duration) -> Self {
        self.event_poll_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// The lease a run holds on its thread (default 15 s): renewed every third of it while the
    /// run goes on. A runner that dies is known dead at once by its presence (each store holds
    /// an advisory lock on a connection of its own, freed by PostgreSQL with the process); the
    /// ttl is what bounds the takeover when that cannot tell (a lease written before the store's
    /// presence connection was made, or by an older build). A run that cannot renew it for this long (its process stalled, the
    /// database unreachable) loses it: nothing more it writes is stored, and it stops before its
    /// next model step, `failed (lease_lost)`.
    pub fn run_lease_ttl(mut self, ttl: Duration) -> Self {
        self.run_lease_ttl = ttl.max(Duration::from_millis(100));
        self
    }

    /// How often every runtime on the store looks for threads whose owner died (default 5 s):
    /// a thread left `running`, or with accepted inputs, whose lease has expired or whose lease
    /// holder is gone is settled and its inbox run by whichever process finds it first. A dead
    /// owner's thread is therefore recovered within this interval of its death (`run_lease_ttl`
    /// plus this interval for a lease written without presence).
    ///
    /// ```
    /// use std::time::Duration;
    /// use hooks_runtime::store::PostgresOptions;
    ///
    /// let options = PostgresOptions::new().run_lease_ttl(Duration::from_secs(10)).recovery_sweep(Duration::from_secs(2));
    /// # let _ = options;
    /// ```
    pub fn recovery_sweep(mut self, interval: Duration) -> Self {
        self.recovery_sweep = interval.max(Duration::from_millis(50));
        self
    }

    /// How long a run waits for a thread that another process is running (default 300 s)
    /// before it fails with an error naming the holder.
    pub fn run_wait(mut self, wait: Duration) -> Self {
        self.run_wait = wait;
        self
    }
}

/// A URL whose scheme is not PostgreSQL's (`postgress://`, `mysql://`) is refused naming it:
/// the driver's own error only says the string is invalid. A `key=value` string has no scheme
/// and goes to the driver as it is.
pub(super) fn check_url_scheme(url: &str) -> Result<(), crate::store::StoreError> {
    let Some((scheme, _)) = url.split_once("://") else { return Ok(()) };
    if scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql") {
        return Ok(());
    }
    // Only the scheme is echoed: the rest may hold a password.
    let scheme: String = scheme.chars().filter(|c| !c.is_control()).take(40).collect();
    Err(crate::store::StoreError::other(format!(
        "connect: the URL scheme `{scheme}://` is not PostgreSQL's; write `postgres://` or `postgresql://`"
    )))
}

#[cfg(test)]
mod tests {
    use super::check_url_scheme;

    #[test]
    fn a_misspelt_url_scheme_is_named_with_the_two_that_work() {
        let text = check_url_scheme("postgress://user:secret@127.0.0.1:5432/test").unwrap_err().to_string();
        assert!(text.contains("`postgress://`") && text.contains("`postgres://` or `postgresql://`"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        assert!(check_url_scheme("postgresql://u@h/db").is_ok() && check_url_scheme("host=h user=u").is_ok());
    }
}
