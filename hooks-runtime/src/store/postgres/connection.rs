//! The store's handle: the pool, the settings it connected with, and the state its runs and
//! subscriptions share (fences, the listening hub). Every other module of the store adds
//! methods to [`PostgresStore`] and reaches this state through it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::driver::{describe_pg, pg_kind};
use super::fence::Fences;
use super::hub::Hub;
use super::options::{DEFAULT_SCHEMA, PostgresOptions};
use super::presence::Presence;
use super::schema;
use crate::store::rows::Op;
use crate::store::{StoreError, StoreErrorKind};

/// How long connecting to the server may take when the URL does not say (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `connect` waits for the presence connection (see `presence`) before it returns
/// anyway; leases written before it is made expire as leases without presence do.
const PRESENCE_SETTLE: Duration = Duration::from_secs(2);
/// How long an operation waits for a free pooled connection before failing.
const POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest schema name [`PostgresOptions::schema`] takes, so that the notification channel
/// derived from it stays within PostgreSQL's 63-byte identifiers.
const MAX_SCHEMA_NAME: usize = 40;

/// A [`MessageStore`] in PostgreSQL, shared by every runtime process that connects to the same
/// database and schema. Besides the trait it has thread events across processes
/// ([`publish`](Self::publish), [`subscribe`](Self::subscribe)); every run holds a lease on its
/// thread ([`RunOwnership::hold_run`]), so that no two processes run one thread at once.
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
///
/// [`MessageStore`]: crate::store::MessageStore
/// [`RunOwnership::hold_run`]: crate::store::RunOwnership::hold_run
#[derive(Clone)]
pub struct PostgresStore {
    pub(super) inner: Arc<Inner>,
}

/// What the clones of one store share.
pub(super) struct Inner {
    pub(super) pool: Pool,
    /// The connection settings, `search_path` included, for the listening connections.
    pub(super) config: tokio_postgres::Config,
    /// The server, user and database (and schema), without the password, for error texts.
    pub(super) target: String,
    /// The `LISTEN`/`NOTIFY` channel of this schema's thread events.
    pub(super) channel: String,
    /// The `LISTEN`/`NOTIFY` channel of this schema's user value changes.
    pub(super) user_channel: String,
    /// [`PostgresOptions::event_poll_interval`].
    pub(super) event_poll_interval: Duration,
    /// [`PostgresOptions::run_lease_ttl`] and [`PostgresOptions::run_wait`].
    pub(super) run_lease_ttl: Duration,
    pub(super) run_wait: Duration,
    /// [`PostgresOptions::recovery_sweep`].
    pub(super) recovery_sweep: Duration,
    /// This store's name as a lease owner: process id and a random part, so that two stores
    /// of one process (two runtimes) are two owners.
    pub(super) owner: String,
    /// The threads this store's runs hold, whose writes check the lease.
    pub(super) fences: Arc<Fences>,
    /// The connection that tells other processes this store is alive (see `presence`).
    pub(super) presence: Presence,
    /// The one connection that listens for every subscription's thread events.
    pub(super) hub: Hub,
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
        super::options::check_url_scheme(url)?;
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
        let owner = format!("pid{}:{}", std::process::id(), crate::ids::new_id("store"));
        let fences = Arc::new(Fences::default());
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
                presence: Presence::start(config.clone(), owner.clone(), fences.clone()),
                config,
                target,
                user_channel: channel.replacen("hooks_events", "hooks_users", 1),
                channel,
                event_poll_interval: options.event_poll_interval,
                run_lease_ttl: options.run_lease_ttl,
                run_wait: options.run_wait,
                recovery_sweep: options.recovery_sweep,
                owner,
                fences,
                hub: Hub::default(),
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
        store.inner.presence.settle(PRESENCE_SETTLE).await;
        Ok(store)
    }

    /// The server, user, database and schema this store uses, without the password, as error
    /// texts name it: `postgres://postgres@127.0.0.1:5432/test (schema `agents`)`.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// Refuses a write to a thread whose lease a run of this store held and lost (see
    /// `fence`); call it first in the write's transaction.
    pub(super) async fn check_fence(
        &self,
        op: &Op<'_>,
        tx: &deadpool_postgres::Transaction<'_>,
    ) -> Result<(), StoreError> {
        match self.inner.fences.of(op.thread_id) {
            Some(fence) => fence.check(op, tx).await,
            None => Ok(()),
        }
    }

    /// A pooled connection; a failure names the server, never the password.
    pub(super) async fn client(&self, operation: &str) -> Result<Object, StoreError> {
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
