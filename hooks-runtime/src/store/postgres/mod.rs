//! The PostgreSQL [`MessageStore`]: one database that many runtime processes share (feature
//! `postgres`).
//!
//! Why `tokio-postgres` and `deadpool-postgres`: the runtime is already on tokio, and
//! `tokio-postgres` is the maintained async driver for it with first-class `LISTEN`/`NOTIFY`
//! (each connection hands out its notifications), which the cross-process events need and which
//! `sqlx` exposes only through a separate listener type. `deadpool-postgres` is the small,
//! maintained pool for it, with a per-connection statement cache. `sqlx` would bring its own
//! runtime abstraction, macros and migration machinery that this store does not use: the schema
//! is a few steps of plain SQL.
//!
//! Every write is one transaction. Writes to a thread first lock its row (`FOR NO KEY UPDATE`), so
//! concurrent writers of one thread, in any process, take turns and each message's place in the
//! thread (`seq`) is the order in which the inserts committed.
//!
//! # Leases: one running owner per thread
//!
//! Every run ([`MessageStore::hold_run`], taken by `Thread::send` and `run_queued`) holds a
//! lease row on its thread, with an expiry on the database server's clock. Timings, with the
//! defaults of [`PostgresOptions`]:
//!
//! - the lease lasts `run_lease_ttl` (15 s) and its holder renews it every third of that (5 s);
//! - a send to a thread that another process runs waits, polling every 10 ms and backing off to
//!   250 ms, for up to `run_wait` (300 s): a released lease is taken within about 250 ms;
//! - if the holder dies, another process can take the thread `run_lease_ttl` after the last
//!   renewal (10 to 15 s after the death), and marks a thread left `running` as
//!   `failed (owner_lost)` in the same transaction;
//! - every runtime on the store sweeps every `recovery_sweep` (5 s) for threads left `running`,
//!   or with inputs in their inbox, that no live lease holds
//!   ([`MessageStore::unsettled_threads`]), and recovers them: a dead owner's thread is settled
//!   and its inbox run within `run_lease_ttl` plus one sweep, without a new send;
//! - a holder that loses its lease (a renewal finds it taken or expired, no renewal succeeds for
//!   a whole ttl, or a write finds it gone) has its writes to the thread refused from the moment
//!   the lease expired: each write checks the lease in its own transaction (`fence`). The
//!   runtime stops the run before its next model step, and the run ends `failed (lease_lost)`.
//!   A takeover waits for a write that passed the check, so no write of the old holder lands
//!   after it.
//!
//! # Delivery guarantees
//!
//! - Thread events ([`publish`](PostgresStore::publish), [`subscribe`](PostgresStore::subscribe)):
//!   exactly once and in order within a subscription, across lost connections too; a client
//!   that comes back subscribes with the last `seq` it saw and de-duplicates by
//!   `(thread, seq)`, which makes delivery to it at least once. A runtime publishes its events
//!   from a task of its own, and all of a run's events before its lease is released, so the
//!   runs of one thread never interleave in its events. A write that loses its connection is
//!   tried again for up to 30 s, each event stored once: when the connection went during the
//!   commit, `pg_xact_status` (PostgreSQL 13 and later) tells whether it committed. An event the
//!   server refuses, or that cannot be written for 30 s, is logged and given up.
//! - User value changes ([`publish_user`](PostgresStore::publish_user),
//!   [`subscribe_users`](PostgresStore::subscribe_users)): exactly once and in publishing order
//!   to every runtime listening (from its first `attach_client`), which runs its
//!   `user_value_changed` hooks if a client of that user is attached to it. The changing runtime
//!   runs them itself and skips its own change when it comes back.
//!
//! Error rule: a [`StoreError`] names the operation, the thread and the message id where there is
//! one, and for a server error its SQLSTATE and primary message only; the error's `DETAIL`, which
//! can quote a row, is dropped, so message contents never reach an error text. A connection
//! error names the server as `postgres://user@host:port/database`, never the password.
//!
//! # Where the tables are
//!
//! In the schema [`DEFAULT_SCHEMA`] (`agent_hooks`), created if absent, unless
//! [`PostgresOptions::schema`] names another or [`PostgresOptions::search_path`] leaves the
//! choice to the connection's `search_path`; the store's tables are then never mixed with the
//! application's own in `public`. When `agent_hooks` has none of the store's tables but `public`
//! does, [`PostgresStore::connect`] refuses rather than start over with empty tables, and says
//! how to keep using those.
//!
//! TLS is not negotiated (`NoTls`): run the store on a trusted network or through a local proxy.

mod driver;
mod events;
mod fence;
// Public types, reachable only through `__test`: the runtime holds leases through `hold_run`.
#[cfg_attr(not(feature = "__test"), allow(unreachable_pub))]
pub(crate) mod lease;
mod schema;
mod user_events;
mod user_values;

use driver::{describe_pg, pg_kind, read_snapshot};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use hooks_core::{HookMessage, MessageUpdate};
use serde_json::Value;
use tokio_postgres::types::ToSql;

use crate::approvals::{ApprovalState, ParkedToolCall, ToolCallChange};
use tokio_postgres::NoTls;

use super::rows::{self, Op, ParkedColumns, ParkedJson, ThreadColumns, read_message};
use super::{
    EventSubscription, InboxEntry, MessageStore, RunPermit, StoreError, StoreErrorKind, ThreadRecord, ThreadStatus,
    UserChange, UserValue, inbox,
};

/// How long connecting to the server may take when the URL does not say (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an operation waits for a free pooled connection before failing.
const POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest schema name [`PostgresOptions::schema`] takes, so that the notification channel
/// derived from it stays within PostgreSQL's 63-byte identifiers.
const MAX_SCHEMA_NAME: usize = 40;

/// The message columns in the order [`read_message`] reads them, `seq` last.
const READ_COLUMNS: &str = "id, role, content, name, tool_calls, tool_call_id, created_at, parent_id, depth, silent, \
                            extra::text, seq";

/// The schema [`PostgresStore::connect`] keeps its tables in (created if absent), unless
/// [`PostgresOptions::schema`] or [`PostgresOptions::search_path`] says otherwise.
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
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    schema: Option<String>,
    max_connections: usize,
    event_poll_interval: Duration,
    run_lease_ttl: Duration,
    run_wait: Duration,
    recovery_sweep: Duration,
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

    /// The most connections the pool opens (at least 1). While there are subscriptions
    /// ([`PostgresStore::subscribe`]), one more connection listens for all of them; while the
    /// user value changes are followed, one more.
    pub fn max_connections(mut self, max_connections: usize) -> Self {
        self.max_connections = max_connections.max(1);
        self
    }

    /// How often a subscription ([`PostgresStore::subscribe`]) reads the events table without
    /// a notification, in case one was lost with a connection (default 5 s). Events normally
    /// arrive by notification within milliseconds; this bounds the delay when one does not.
    pub fn event_poll_interval(mut self, interval: Duration) -> Self {
        self.event_poll_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// The lease a run holds on its thread (default 15 s): renewed every third of it while the
    /// run goes on, so another process can take a thread whose runner died this long after its
    /// last renewal. A run that cannot renew it for this long (its process stalled, the
    /// database unreachable) loses it: nothing more it writes is stored, and it stops before its
    /// next model step, `failed (lease_lost)`.
    pub fn run_lease_ttl(mut self, ttl: Duration) -> Self {
        self.run_lease_ttl = ttl.max(Duration::from_millis(100));
        self
    }

    /// How often every runtime on the store looks for threads whose owner died (default 5 s):
    /// a thread left `running`, or with accepted inputs, whose lease has expired is settled
    /// `failed (owner_lost)` and its inbox run by whichever process finds it first. A dead
    /// owner's thread is therefore recovered within `run_lease_ttl` plus this interval.
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

/// A [`MessageStore`] in PostgreSQL, shared by every runtime process that connects to the same
/// database and schema. Besides the trait it has thread events across processes
/// ([`publish`](Self::publish), [`subscribe`](Self::subscribe)); every run holds a lease on its
/// thread ([`MessageStore::hold_run`]), so that no two processes run one thread at once.
///
/// Cloning is cheap: clones share one pool.
///
/// ```no_run
/// use hooks_runtime::store::{MessageStore, PostgresStore, ThreadRecord};
///
/// # async fn run() -> Result<(), hooks_runtime::store::StoreError> {
/// let store = PostgresStore::connect("postgres://postgres@127.0.0.1:5432/test").await?;
/// let thread = ThreadRecord::new("t1", "support", 1_700_000_000_000);
/// store.create_thread(&thread).await?;
/// assert_eq!(store.load_thread("t1").await?, Some(thread));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    inner: Arc<Inner>,
}

struct Inner {
    pool: Pool,
    /// The connection settings, `search_path` included, for the listening connections.
    config: tokio_postgres::Config,
    /// The server, user and database (and schema), without the password, for error texts.
    target: String,
    /// The `LISTEN`/`NOTIFY` channel of this schema's thread events.
    channel: String,
    /// The `LISTEN`/`NOTIFY` channel of this schema's user value changes.
    user_channel: String,
    /// [`PostgresOptions::event_poll_interval`].
    event_poll_interval: Duration,
    /// [`PostgresOptions::run_lease_ttl`] and [`PostgresOptions::run_wait`].
    run_lease_ttl: Duration,
    run_wait: Duration,
    /// [`PostgresOptions::recovery_sweep`].
    recovery_sweep: Duration,
    /// This store's name as a lease owner: process id and a random part, so that two stores
    /// of one process (two runtimes) are two owners.
    owner: String,
    /// The threads this store's runs hold, whose writes check the lease.
    fences: fence::Fences,
    /// The one connection that listens for every subscription's thread events.
    hub: events::Hub,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore").field("target", &self.inner.target).finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects with the default [`PostgresOptions`]: the tables are in the schema
    /// [`DEFAULT_SCHEMA`] (`agent_hooks`), created or migrated here.
    ///
    /// `url` is a PostgreSQL connection string (`postgres://user:password@host:port/database` or
    /// `host=... user=...`). Fails when the server cannot be reached (within the URL's
    /// `connect_timeout`, 10 s by default), when the database has a schema version newer than
    /// this build's, when it has this store's table names without a schema version, or when
    /// `agent_hooks` has none of the store's tables and `public` does (connect with
    /// [`PostgresOptions::search_path`] to use those).
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// Connects with `options`; see [`connect`](Self::connect).
    ///
    /// ```no_run
    /// use hooks_runtime::store::{PostgresOptions, PostgresStore};
    ///
    /// # async fn run() -> Result<(), hooks_runtime::store::StoreError> {
    /// let url = std::env::var("HOOKS_DATABASE_URL").unwrap_or("postgres://postgres@127.0.0.1:5432/test".into());
    /// let store = PostgresStore::connect_with(&url, PostgresOptions::new().schema("agents")).await?;
    /// println!("connected to {}", store.target());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect_with(url: &str, options: PostgresOptions) -> Result<Self, StoreError> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError::other(format!("connect: not a PostgreSQL connection string: {e}")))?;
        if let Some(schema) = &options.schema {
            check_schema_name(schema)?;
            let search_path = format!("-c search_path={schema}");
            let merged = match config.get_options() {
                Some(existing) if !existing.is_empty() => format!("{existing} {search_path}"),
                _ => search_path,
            };
            config.options(&merged);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
        }
        let mut target = describe_target(&config);
        if let Some(schema) = &options.schema {
            target.push_str(&format!(" (schema `{schema}`)"));
        }
        let channel = match &options.schema {
            Some(schema) => format!("hooks_events_{schema}"),
            None => "hooks_events".to_owned(),
        };
        let connect_timeout = config.get_connect_timeout().copied().unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        let manager =
            Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(options.max_connections)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT_TIMEOUT))
            .create_timeout(Some(connect_timeout + Duration::from_secs(1)))
            .build()
            .map_err(|e| StoreError::other(format!("connect to {target}: build the connection pool: {e}")))?;
        let store = PostgresStore {
            inner: Arc::new(Inner {
                pool,
                config,
                target,
                user_channel: channel.replacen("hooks_events", "hooks_users", 1),
                channel,
                event_poll_interval: options.event_poll_interval,
                run_lease_ttl: options.run_lease_ttl,
                run_wait: options.run_wait,
                recovery_sweep: options.recovery_sweep,
                owner: format!("pid{}:{}", std::process::id(), crate::ids::new_id("store")),
                fences: fence::Fences::default(),
                hub: events::Hub::default(),
            }),
        };

        let fail = |kind, detail: String| StoreError::new(kind, format!("connect to {}: {detail}", store.inner.target));
        let pg = |e: tokio_postgres::Error| fail(pg_kind(&e), describe_pg(&e)).with_source(e);
        let mut client = store.client("open").await?;
        let tx = client.transaction().await.map_err(pg)?;
        // What these refuse is a schema of another version or program.
        if options.schema.as_deref() == Some(DEFAULT_SCHEMA) {
            refuse_tables_left_in_public(&tx).await.map_err(|detail| fail(StoreErrorKind::Corrupt, detail))?;
        }
        schema::migrate(&tx, options.schema.as_deref())
            .await
            .map_err(|detail| fail(StoreErrorKind::Corrupt, detail))?;
        tx.commit().await.map_err(pg)?;
        drop(client);
        Ok(store)
    }

    /// The server, user, database and schema this store uses, without the password, as error
    /// texts name it: `postgres://postgres@127.0.0.1:5432/test (schema `agents`)`.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// Refuses a write to a thread whose lease a run of this store held and lost (see
    /// `fence`); call it first in the write's transaction.
    async fn check_fence(&self, op: &Op<'_>, tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
        match self.inner.fences.of(op.thread_id) {
            Some(fence) => fence.check(op, tx).await,
            None => Ok(()),
        }
    }

    /// Takes the inbox entry `op` names and inserts `message` in one transaction behind the
    /// fence; with `running`, the thread's status becomes `running` in it too (one commit).
    async fn take(&self, op: Op<'_>, message: Option<&HookMessage>, running: bool) -> Result<bool, StoreError> {
        let (thread_id, input_id) = (op.thread_id, op.message_id.unwrap_or_default());
        let mut client = self.client(op.name).await?;
        // One transaction for both: the input leaves the inbox exactly when its message is in.
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        let statement =
            tx.prepare_cached("DELETE FROM thread_inbox WHERE thread_id = $1 AND id = $2").await.map_err(op.pg())?;
        if tx.execute(&statement, &[&thread_id, &input_id]).await.map_err(op.pg())? == 0 {
            return Ok(false);
        }
        if let Some(message) = message {
            insert_row(&Op::message(op.name, thread_id, &message.id), &tx, message).await?;
        }
        if running {
            let (status, reason) = rows::status_columns(&ThreadStatus::Running);
            let statement = tx
                .prepare_cached("UPDATE threads SET status = $2, status_reason = $3 WHERE id = $1")
                .await
                .map_err(op.pg())?;
            tx.execute(&statement, &[&thread_id, &status, &reason]).await.map_err(op.pg())?;
        }
        tx.commit().await.map_err(op.pg())?;
        Ok(true)
    }

    /// A pooled connection; a failure names the server, never the password.
    async fn client(&self, operation: &str) -> Result<Object, StoreError> {
        self.inner.pool.get().await.map_err(|e| {
            let detail = match &e {
                deadpool_postgres::PoolError::Backend(e) => describe_pg(e),
                other => other.to_string(),
            };
            StoreError::connection(format!("{operation}: connect to {}: {detail}", self.inner.target)).with_source(e)
        })
    }
}

/// With the default schema, which has none of the store's tables yet: refuses when `public` has
/// them, rather than start over beside them with empty tables.
async fn refuse_tables_left_in_public(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), String> {
    let sql = format!(
        "SELECT to_regclass('public.hooks_schema_version') IS NOT NULL \
         AND to_regclass('{DEFAULT_SCHEMA}.hooks_schema_version') IS NULL"
    );
    let left: bool = tx.query_one(&sql, &[]).await.map_err(|e| describe_pg(&e))?.get(0);
    if left {
        return Err(format!(
            "schema `public` has this store's tables and schema `{DEFAULT_SCHEMA}` has none; to keep using \
             them, connect with `PostgresOptions::new().search_path()` (or `.schema(\"public\")`), or move them \
             to `{DEFAULT_SCHEMA}` (`ALTER TABLE public.<table> SET SCHEMA {DEFAULT_SCHEMA}` for each)"
        ));
    }
    Ok(())
}

/// Refuses a schema name that would need quoting or not fit a channel name.
fn check_schema_name(schema: &str) -> Result<(), StoreError> {
    let mut chars = schema.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if starts_well && rest_ok && schema.len() <= MAX_SCHEMA_NAME {
        Ok(())
    } else {
        Err(StoreError::other(format!(
            "connect: schema name `{schema}` is not usable: use lower-case ASCII letters, digits and `_`, not \
             starting with a digit, at most {MAX_SCHEMA_NAME} characters"
        )))
    }
}

/// `postgres://user@host:port/database`, from the parsed settings: never the password.
fn describe_target(config: &tokio_postgres::Config) -> String {
    let user = config.get_user().unwrap_or("");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        #[cfg(unix)]
        Some(tokio_postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let database = config.get_dbname().unwrap_or(user);
    let at = if user.is_empty() { String::new() } else { format!("{user}@") };
    format!("postgres://{at}{host}:{port}/{database}")
}

/// Upserts one thread value; the caller's transaction makes it atomic with what goes with it.
async fn write_value(
    op: &Op<'_>,
    tx: &deadpool_postgres::Transaction<'_>,
    key: &str,
    value: &Value,
) -> Result<(), StoreError> {
    let json = rows::encode(op, format_args!("thread value `{key}`"), value)?;
    let statement = tx
        .prepare_cached(
            "INSERT INTO thread_values (thread_id, key, value) VALUES ($1, $2, $3::text::json)
             ON CONFLICT (thread_id, key) DO UPDATE SET value = excluded.value",
        )
        .await
        .map_err(op.pg())?;
    tx.execute(&statement, &[&op.thread_id, &key, &json]).await.map_err(op.pg())?;
    Ok(())
}

/// The thread `op` names and its values, read in the caller's transaction.
async fn read_thread(op: &Op<'_>, tx: &deadpool_postgres::Transaction<'_>) -> Result<Option<ThreadRecord>, StoreError> {
    let statement = tx
        .prepare_cached(
            "SELECT agent, user_id, created_at, arguments::text, status, status_reason FROM threads WHERE id = $1",
        )
        .await
        .map_err(op.pg())?;
    let Some(row) = tx.query_opt(&statement, &[&op.thread_id]).await.map_err(op.pg())? else {
        return Ok(None);
    };
    let columns = ThreadColumns::read(op, &row)?;
    let statement = tx
        .prepare_cached("SELECT key, value::text FROM thread_values WHERE thread_id = $1 ORDER BY key")
        .await
        .map_err(op.pg())?;
    let values = tx
        .query(&statement, &[&op.thread_id])
        .await
        .map_err(op.pg())?
        .iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect::<Result<Vec<_>, tokio_postgres::Error>>()
        .map_err(op.pg())?;
    columns.into_record(op, values).map(Some)
}

/// Inserts `message` as the thread's next message, in the caller's transaction (whose fence is
/// checked): refused for an unknown thread or an id the thread already has.
async fn insert_row(
    op: &Op<'_>,
    tx: &deadpool_postgres::Transaction<'_>,
    message: &HookMessage,
) -> Result<(), StoreError> {
    let thread_id = op.thread_id;
    let extra = rows::extra_json(op, message)?;
    let depth = message.depth.map(i64::from);
    let role = message.role.as_str();
    Op::thread(op.name, thread_id).ensure_thread(tx, true).await?;
    let statement = tx
        .prepare_cached(
            "INSERT INTO messages (thread_id, seq, id, role, content, name, tool_calls, tool_call_id, created_at,
                                   parent_id, depth, silent, extra)
             VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE thread_id = $1),
                     $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text::json)
             ON CONFLICT (thread_id, id) DO NOTHING",
        )
        .await
        .map_err(op.pg())?;
    let inserted = tx
        .execute(&statement, &message_params(&thread_id, &message.id, message, &role, &depth, &extra))
        .await
        .map_err(op.pg())?;
    if inserted == 0 {
        return Err(op.error(StoreErrorKind::Conflict, "the message already exists"));
    }
    Ok(())
}

#[async_trait::async_trait]
impl MessageStore for PostgresStore {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        let op = Op::thread("create_thread", &thread.id);
        let arguments = rows::encode(&op, "the arguments", &thread.arguments)?;
        let (status, reason) = rows::status_columns(&thread.status);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO threads (id, agent, user_id, created_at, arguments, status, status_reason)
                 VALUES ($1, $2, $3, $4, $5::text::json, $6, $7) ON CONFLICT (id) DO NOTHING",
            )
            .await
            .map_err(op.pg())?;
        let inserted = tx
            .execute(
                &statement,
                &[&thread.id, &thread.agent, &thread.user_id, &thread.created_at, &arguments, &status, &reason],
            )
            .await
            .map_err(op.pg())?;
        if inserted == 0 {
            return Err(op.error(StoreErrorKind::Conflict, "the thread already exists"));
        }
        for (key, value) in &thread.values {
            write_value(&op, &tx, key, value).await?;
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        let op = Op::thread("load_thread", thread_id);
        let mut client = self.client(op.name).await?;
        // One snapshot for the thread and its values.
        let tx = read_snapshot(&mut client).await.map_err(op.pg())?;
        let record = read_thread(&op, &tx).await?;
        tx.commit().await.map_err(op.pg())?;
        Ok(record)
    }

    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        let fail = |e: tokio_postgres::Error| {
            StoreError::new(pg_kind(&e), format!("threads_of_user: user `{user_id}`: PostgreSQL: {}", describe_pg(&e)))
                .with_source(e)
        };
        let mut client = self.client("threads_of_user").await?;
        // One snapshot for the list and every thread in it.
        let tx = read_snapshot(&mut client).await.map_err(fail)?;
        let statement = tx
            .prepare_cached("SELECT id FROM threads WHERE user_id = $1 ORDER BY created_at, id")
            .await
            .map_err(fail)?;
        let ids: Vec<String> = tx
            .query(&statement, &[&user_id])
            .await
            .map_err(fail)?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(fail)?;
        let mut threads = Vec::with_capacity(ids.len());
        for id in &ids {
            threads.extend(read_thread(&Op::thread("threads_of_user", id), &tx).await?);
        }
        tx.commit().await.map_err(fail)?;
        Ok(threads)
    }

    async fn set_value(&self, thread_id: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        let op = Op::thread("set_value", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        op.ensure_thread(&tx, false).await?;
        write_value(&op, &tx, key, value).await?;
        tx.commit().await.map_err(op.pg())
    }

    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        let op = Op::thread("set_status", thread_id);
        let (status, reason) = rows::status_columns(status);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        let statement = tx
            .prepare_cached("UPDATE threads SET status = $2, status_reason = $3 WHERE id = $1")
            .await
            .map_err(op.pg())?;
        let changed = tx.execute(&statement, &[&thread_id, &status, &reason]).await.map_err(op.pg())?;
        if changed == 0 {
            return Err(op.error(StoreErrorKind::NotFound, "no such thread"));
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<HookMessage, StoreError> {
        let op = Op::message("insert_message", thread_id, &message.id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        insert_row(&op, &tx, message).await?;
        tx.commit().await.map_err(op.pg())?;
        Ok(message.clone())
    }

    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        let op = Op::message("update_message", thread_id, message_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        Op::thread(op.name, thread_id).ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(&format!(
                "SELECT {READ_COLUMNS} FROM messages WHERE thread_id = $1 AND id = $2 FOR NO KEY UPDATE"
            ))
            .await
            .map_err(op.pg())?;
        let Some(row) = tx.query_opt(&statement, &[&thread_id, &message_id]).await.map_err(op.pg())? else {
            return Err(op.error(StoreErrorKind::NotFound, "no such message"));
        };
        let mut message = read_message(op.name, thread_id, &row)?;
        update.apply_to(&mut message);
        let extra = rows::extra_json(&op, &message)?;
        let depth = message.depth.map(i64::from);
        let statement = tx
            .prepare_cached(
                "UPDATE messages SET role = $3, content = $4, name = $5, tool_calls = $6, tool_call_id = $7,
                     created_at = $8, parent_id = $9, depth = $10, silent = $11, extra = $12::text::json
                 WHERE thread_id = $1 AND id = $2",
            )
            .await
            .map_err(op.pg())?;
        let role = message.role.as_str();
        tx.execute(&statement, &message_params(&thread_id, &message_id, &message, &role, &depth, &extra))
            .await
            .map_err(op.pg())?;
        tx.commit().await.map_err(op.pg())?;
        Ok(message)
    }

    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError> {
        let op = Op::thread("messages", thread_id);
        let mut client = self.client(op.name).await?;
        // One snapshot for the existence check and the rows.
        let tx = read_snapshot(&mut client).await.map_err(op.pg())?;
        op.ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(&format!("SELECT {READ_COLUMNS} FROM messages WHERE thread_id = $1 ORDER BY seq"))
            .await
            .map_err(op.pg())?;
        let rows = tx.query(&statement, &[&thread_id]).await.map_err(op.pg())?;
        let messages = rows.iter().map(|row| read_message(op.name, thread_id, row)).collect::<Result<Vec<_>, _>>()?;
        tx.commit().await.map_err(op.pg())?;
        Ok(messages)
    }

    fn publishes_events(&self) -> bool {
        true
    }

    /// [`PostgresStore::subscribe`] after the thread's last event so far.
    async fn subscribe_events(&self, thread_id: &str) -> Result<Option<EventSubscription>, StoreError> {
        let last = self.last_event_seq(thread_id).await?;
        self.subscribe(thread_id, last).await.map(Some)
    }

    /// The largest `seq` of the thread's events.
    async fn latest_event_seq(&self, thread_id: &str) -> Result<u64, StoreError> {
        self.last_event_seq(thread_id).await
    }

    /// [`PostgresStore::publish`]: the event in the events table, and a `NOTIFY`.
    async fn publish_event(&self, thread_id: &str, event: &crate::ThreadEvent) -> Result<(), StoreError> {
        self.publish(thread_id, event).await.map(|_| ())
    }

    /// A row of `user_values`, read.
    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        self.read_user_values(user_id).await
    }

    /// The old value read and the new one written under an advisory lock of the user's key.
    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Option<Value>, StoreError> {
        self.write_user_value(user_id, key, value).await
    }

    /// A row of the user events table and a `NOTIFY` naming it, in one transaction.
    async fn publish_user_change(&self, change: &UserChange) -> Result<(), StoreError> {
        self.publish_user(change).await
    }

    /// User value changes through the store's one listening connection; see
    /// [`PostgresStore::subscribe_users`].
    async fn user_changes(&self) -> Result<Option<tokio::sync::mpsc::Receiver<UserChange>>, StoreError> {
        self.subscribe_users().await.map(Some)
    }

    async fn enqueue_input(&self, thread_id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        let op = Op::message("enqueue_input", thread_id, &entry.id);
        let message = inbox::encode(entry).map_err(|e| op.error(StoreErrorKind::Other, e))?;
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        Op::thread(op.name, thread_id).ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO thread_inbox (thread_id, id, message, enqueued_at) VALUES ($1, $2, $3::text::json, $4)
                 ON CONFLICT (thread_id, id) DO NOTHING",
            )
            .await
            .map_err(op.pg())?;
        let inserted =
            tx.execute(&statement, &[&thread_id, &entry.id, &message, &entry.enqueued_at]).await.map_err(op.pg())?;
        if inserted == 0 {
            return Err(op.error(StoreErrorKind::Conflict, "the inbox entry already exists"));
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn park_tool_calls(&self, thread_id: &str, calls: &[ParkedToolCall]) -> Result<(), StoreError> {
        let op = Op::thread("park_tool_calls", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        op.ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO parked_tool_calls
                 (thread_id, id, position, tool, arguments, reasons, requested_at, state, decision_reason, result)
                 VALUES ($1, $2, $3, $4, $5::text::json, $6::text::json, $7, $8, $9, $10::text::json)",
            )
            .await
            .map_err(op.pg())?;
        for call in calls {
            let position = i32::try_from(call.position).map_err(|e| op.error(StoreErrorKind::Other, e))?;
            let json = ParkedJson::of(&op, call)?;
            tx.execute(
                &statement,
                &[
                    &thread_id,
                    &call.id,
                    &position,
                    &call.tool,
                    &json.arguments,
                    &json.reasons,
                    &call.requested_at,
                    &call.state.as_str(),
                    &call.decision_reason,
                    &json.result,
                ],
            )
            .await
            .map_err(op.pg())?;
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError> {
        let op = Op::thread("parked_tool_calls", thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached(
                "SELECT id, position::bigint, tool, arguments::text, reasons::text, requested_at, state,
                        decision_reason, result::text
                 FROM parked_tool_calls WHERE thread_id = $1 ORDER BY position",
            )
            .await
            .map_err(op.pg())?;
        let rows = client.query(&statement, &[&thread_id]).await.map_err(op.pg())?;
        rows.iter().map(|row| ParkedColumns::read(&op, row)?.into_call(&op)).collect()
    }

    async fn advance_tool_call(
        &self,
        thread_id: &str,
        call_id: &str,
        from: ApprovalState,
        change: &ToolCallChange,
    ) -> Result<bool, StoreError> {
        let op = Op::thread("advance_tool_call", thread_id);
        let client = self.client(op.name).await?;
        // One conditional write (A4): of two processes deciding at once, the row lock makes the
        // second see the state the first left, and its condition fails.
        let statement = client
            .prepare_cached(
                "UPDATE parked_tool_calls SET state = $1, arguments = COALESCE($2::text::json, arguments),
                 decision_reason = COALESCE($3, decision_reason), result = COALESCE($4::text::json, result)
                 WHERE thread_id = $5 AND id = $6 AND state = $7",
            )
            .await
            .map_err(op.pg())?;
        let arguments = change.arguments.as_ref().map(Value::to_string);
        let result = change.result.as_ref().map(Value::to_string);
        let moved = client
            .execute(
                &statement,
                &[
                    &change.state.as_str(),
                    &arguments,
                    &change.decision_reason,
                    &result,
                    &thread_id,
                    &call_id,
                    &from.as_str(),
                ],
            )
            .await
            .map_err(op.pg())?;
        Ok(moved == 1)
    }

    async fn clear_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError> {
        let op = Op::thread("clear_parked_tool_calls", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        tx.execute("DELETE FROM parked_tool_calls WHERE thread_id = $1", &[&thread_id]).await.map_err(op.pg())?;
        tx.commit().await.map_err(op.pg())
    }

    async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        let op = Op::thread("pending_inputs", thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached("SELECT id, message::text, enqueued_at FROM thread_inbox WHERE thread_id = $1 ORDER BY seq")
            .await
            .map_err(op.pg())?;
        let rows = client.query(&statement, &[&thread_id]).await.map_err(op.pg())?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get(0).map_err(op.pg())?;
                let message: String = row.try_get(1).map_err(op.pg())?;
                inbox::decode(id, &message, row.try_get(2).map_err(op.pg())?)
                    .map_err(|e| op.error(StoreErrorKind::Corrupt, e))
            })
            .collect()
    }

    async fn pending_input(&self, thread_id: &str, input_id: &str) -> Result<Option<InboxEntry>, StoreError> {
        let op = Op::message("pending_input", thread_id, input_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached("SELECT message::text, enqueued_at FROM thread_inbox WHERE thread_id = $1 AND id = $2")
            .await
            .map_err(op.pg())?;
        let Some(row) = client.query_opt(&statement, &[&thread_id, &input_id]).await.map_err(op.pg())? else {
            return Ok(None);
        };
        let message: String = row.try_get(0).map_err(op.pg())?;
        let at: i64 = row.try_get(1).map_err(op.pg())?;
        inbox::decode(input_id.to_owned(), &message, at).map(Some).map_err(|e| op.error(StoreErrorKind::Corrupt, e))
    }

    async fn take_input(
        &self,
        thread_id: &str,
        input_id: &str,
        message: Option<&HookMessage>,
    ) -> Result<bool, StoreError> {
        self.take(Op::message("take_input", thread_id, input_id), message, false).await
    }

    async fn take_input_running(
        &self,
        thread_id: &str,
        input_id: &str,
        message: Option<&HookMessage>,
    ) -> Result<bool, StoreError> {
        self.take(Op::message("take_input_running", thread_id, input_id), message, true).await
    }

    /// Threads left `running`, or with inputs accepted longer than a lease's ttl ago, that no
    /// live lease holds: their owner died, or never started the run.
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        let fail = |e: tokio_postgres::Error| {
            StoreError::new(pg_kind(&e), format!("unsettled_threads: PostgreSQL: {}", describe_pg(&e))).with_source(e)
        };
        let client = self.client("unsettled_threads").await?;
        let statement = client
            .prepare_cached(
                "SELECT c.id FROM (
                     SELECT id FROM threads WHERE status = 'running'
                     UNION
                     SELECT thread_id FROM thread_inbox
                     WHERE stored_at < clock_timestamp() - $1::bigint * interval '1 millisecond'
                 ) c
                 WHERE NOT EXISTS (SELECT 1 FROM thread_leases l WHERE l.thread_id = c.id
                                   AND l.expires_at > clock_timestamp())
                 ORDER BY c.id",
            )
            .await
            .map_err(fail)?;
        let rows = client.query(&statement, &[&lease::millis(self.inner.run_lease_ttl)]).await.map_err(fail)?;
        rows.iter().map(|row| row.try_get(0).map_err(fail)).collect()
    }

    /// [`PostgresOptions::recovery_sweep`]: every process sweeps, since any of them may die.
    fn recovery_sweep_interval(&self) -> Option<Duration> {
        Some(self.inner.recovery_sweep)
    }

    /// Holds the thread's lease for the run ([`PostgresOptions::run_lease_ttl`]), renewed every
    /// third of it while the run lasts, waiting up to [`PostgresOptions::run_wait`] while another
    /// process holds it.
    ///
    /// The hold is lost when a renewal finds the lease taken or expired, when no renewal
    /// succeeds for a whole ttl, or when a write finds the lease gone. Until the run releases
    /// it, every write of this store to the thread checks the lease in its own transaction and
    /// is refused once it is lost, so nothing of the old run lands after another process took
    /// the thread over; the runtime stops the run at its next step, `failed (lease_lost)`.
    async fn hold_run(&self, thread_id: &str) -> Result<Option<RunPermit>, StoreError> {
        let inner = &self.inner;
        match self.wait_for_lease(thread_id, &inner.owner, inner.run_lease_ttl, inner.run_wait).await? {
            Some(guard) => {
                let lost = guard.loss_flag();
                let took_over = guard.lease().took_over_a_dead_run;
                inner.fences.hold(guard.lease(), lost.clone());
                let store = self.clone();
                let hold = RunPermit::new(move || async move {
                    store.inner.fences.release(guard.lease());
                    if let Err(error) = guard.release().await {
                        tracing::warn!(%error, "releasing a run's thread lease failed; it expires by itself");
                    }
                });
                Ok(Some(hold.losable(lost.subscribe()).after_a_dead_run(took_over)))
            }
            None => {
                let holder = self.lease_holder(thread_id).await?.map(|(owner, _)| owner);
                Err(StoreError::new(
                    StoreErrorKind::Busy,
                    format!(
                        "thread {thread_id} is being run by another process ({}) and was not released within {:?}",
                        holder.as_deref().unwrap_or("unknown owner"),
                        inner.run_wait
                    ),
                ))
            }
        }
    }
}

/// The parameters of a message row's insert and update, `$1` to `$12`: the thread, the message's
/// id, then its columns in the order both statements name them. The one place the columns meet
/// the message's fields.
fn message_params<'a>(
    thread_id: &'a (dyn ToSql + Sync),
    message_id: &'a (dyn ToSql + Sync),
    message: &'a HookMessage,
    role: &'a &'a str,
    depth: &'a Option<i64>,
    extra: &'a String,
) -> [&'a (dyn ToSql + Sync); 12] {
    [
        thread_id,
        message_id,
        role,
        &message.content,
        &message.name,
        &message.tool_calls,
        &message.tool_call_id,
        &message.created_at,
        &message.parent_id,
        depth,
        &message.silent,
        extra,
    ]
}
