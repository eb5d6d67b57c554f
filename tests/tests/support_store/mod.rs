//! The store the conformance suites run on, chosen by `HOOKS_TEST_STORE`:
//!
//! - unset or `memory`: the in-memory store, as `cargo test --workspace` runs them (no server);
//! - `postgres`: a [`PostgresStore`](hooks_runtime::store::PostgresStore) on the server that
//!   `HOOKS_DATABASE_URL` names (default `postgres://postgres@127.0.0.1:5432/test`), in a fresh
//!   schema per runtime. Needs the `tests` crate's `postgres` feature, and fails, never skips,
//!   when the server is unreachable.
//!
//! Any other value fails the test, so a typo cannot quietly run the in-memory store instead.

#![allow(dead_code)]

use hooks_runtime::prelude::{HookMessage, MessageUpdate};
use hooks_runtime::store::{InMemoryStore, MessageStore, StoreError, ThreadRecord, ThreadStatus, UserValue};
use hooks_runtime::{Runtime, RuntimeBuilder};

/// The variable that picks the store.
pub(crate) const STORE_VARIABLE: &str = "HOOKS_TEST_STORE";

/// [`Runtime::builder`] with the store `HOOKS_TEST_STORE` picks; each call gets a store of its
/// own (for PostgreSQL, a new schema).
pub(crate) async fn builder() -> RuntimeBuilder {
    let choice = std::env::var(STORE_VARIABLE).unwrap_or_default();
    match choice.as_str() {
        "" | "memory" => Runtime::builder(),
        "postgres" => postgres_builder().await,
        other => panic!("{STORE_VARIABLE}=`{other}` is not a store these tests know: use `memory` or `postgres`"),
    }
}

#[cfg(feature = "postgres")]
async fn postgres_builder() -> RuntimeBuilder {
    Runtime::builder().store(postgres::fresh_store().await)
}

#[cfg(not(feature = "postgres"))]
async fn postgres_builder() -> RuntimeBuilder {
    panic!("{STORE_VARIABLE}=postgres needs the PostgreSQL store: run with `--features tests/postgres`")
}

/// The database URL and a schema name no other runtime uses (earlier runs' schemas swept), for
/// tests that connect with options of their own or from child processes.
#[cfg(feature = "postgres")]
pub(crate) async fn fresh_postgres_schema() -> (String, String) {
    postgres::fresh_schema().await
}

#[cfg(feature = "postgres")]
mod postgres {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};

    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    use tokio::sync::OnceCell;

    /// Schemas of this suite start with this; the rest of the name is the creation time in
    /// seconds, the process id and a counter.
    const PREFIX: &str = "conformance_";
    /// A schema left behind (tests do not drop theirs: a test has no end hook) is dropped by a
    /// later run once it is this old, so runs never meet their own schemas.
    const LEFT_BEHIND_AFTER_SECS: u64 = 3600;

    fn database_url() -> String {
        std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
    }

    fn now_secs() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
    }

    /// The URL and a schema no other runtime uses.
    pub(super) async fn fresh_schema() -> (String, String) {
        static SWEPT: OnceCell<()> = OnceCell::const_new();
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let url = database_url();
        SWEPT.get_or_init(|| sweep(&url)).await;
        let schema =
            format!("{PREFIX}{}_{}_{}", now_secs(), std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        (url, schema)
    }

    /// A store in a schema no other runtime uses.
    pub(super) async fn fresh_store() -> PostgresStore {
        let (url, schema) = fresh_schema().await;
        PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
            .await
            .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"))
    }

    /// Drops the schemas earlier runs left behind.
    async fn sweep(url: &str) {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|error| panic!("PostgreSQL at HOOKS_DATABASE_URL is unreachable: {error}"));
        let driver = tokio::spawn(connection);
        let rows = client
            .query("SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)", &[&PREFIX])
            .await
            .expect("list the schemas of earlier runs");
        let cutoff = now_secs().saturating_sub(LEFT_BEHIND_AFTER_SECS);
        for row in rows {
            let name: String = row.get(0);
            let created = name[PREFIX.len()..].split('_').next().and_then(|secs| secs.parse::<u64>().ok());
            if created.is_some_and(|created| created < cutoff) {
                // Another run may be sweeping the same schema; either drop is fine.
                let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE")).await;
            }
        }
        drop(client);
        let _ = driver.await;
    }
}

/// What [`InterceptedInserts`] runs before each message insert: `Err` fails the insert.
pub(crate) type BeforeInsert =
    Box<dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), StoreError>> + Send>> + Send + Sync>;

/// The in-memory store, with `before_insert` run before each message insert: a test's way to
/// fail an insert or to hold one while it looks at the run.
pub(crate) struct InterceptedInserts {
    inner: InMemoryStore,
    before_insert: BeforeInsert,
}

impl InterceptedInserts {
    pub(crate) fn new(before_insert: BeforeInsert) -> Self {
        InterceptedInserts { inner: InMemoryStore::new(), before_insert }
    }
}

#[hooks_runtime::async_trait]
impl MessageStore for InterceptedInserts {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        self.inner.create_thread(thread).await
    }
    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        self.inner.load_thread(thread_id).await
    }
    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        self.inner.set_status(thread_id, status).await
    }
    async fn hand_off(&self, id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError> {
        self.inner.hand_off(id, agent, message).await
    }
    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<(), StoreError> {
        (self.before_insert)().await?;
        self.inner.insert_message(thread_id, message).await
    }
    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        self.inner.update_message(thread_id, message_id, update).await
    }
    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError> {
        self.inner.messages(thread_id).await
    }
    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        self.inner.threads_of_user(user_id).await
    }
    async fn set_value(&self, thread_id: &str, key: &str, value: &serde_json::Value) -> Result<(), StoreError> {
        self.inner.set_value(thread_id, key, value).await
    }
    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        self.inner.user_values(user_id).await
    }
    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&serde_json::Value>,
    ) -> Result<Option<serde_json::Value>, StoreError> {
        self.inner.set_user_value(user_id, key, value).await
    }
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        self.inner.unsettled_threads().await
    }
}
