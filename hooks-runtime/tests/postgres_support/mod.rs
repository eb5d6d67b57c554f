//! A fresh PostgreSQL schema per test, on the server `HOOKS_DATABASE_URL` names (default
//! `postgres://postgres@127.0.0.1:5432/test`). An unreachable server fails the test: these tests
//! never skip.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use hooks_runtime::store::{PostgresOptions, PostgresStore};

/// The server the tests use.
pub(crate) fn database_url() -> String {
    std::env::var("HOOKS_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A schema name no other test (in this or another process) uses.
pub(crate) fn unique_schema(label: &str) -> String {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("t_{label}_{}_{n}_{nanos}", std::process::id())
}

/// A raw connection for what the store does not do (set-up, inspection, clean-up).
pub(crate) async fn raw_client() -> tokio_postgres::Client {
    let url = database_url();
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap_or_else(|e| {
        panic!("PostgreSQL (HOOKS_DATABASE_URL) is unreachable: {e}; start it or set the variable")
    });
    tokio::spawn(connection);
    client
}

/// A schema of its own; [`PgSchema::drop`] removes it at the end of a test.
pub(crate) struct PgSchema {
    pub(crate) name: String,
}

impl PgSchema {
    pub(crate) fn new(label: &str) -> Self {
        PgSchema { name: unique_schema(label) }
    }

    /// A store on this schema (created on first connect), with its own pool.
    pub(crate) async fn store(&self) -> PostgresStore {
        let url = database_url();
        PostgresStore::connect_with(&url, PostgresOptions::new().schema(&self.name).max_connections(8))
            .await
            .unwrap_or_else(|e| panic!("{e}; start PostgreSQL or set HOOKS_DATABASE_URL"))
    }

    /// Drops the schema and everything in it.
    pub(crate) async fn drop(self) {
        let client = raw_client().await;
        client.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name)).await.expect("drop schema");
    }
}

/// A subscriber that notifies the returned `Notify` each time an event whose message contains
/// `fragment` is logged: a test awaits a point the store logs (`"this owner waits for its
/// release"`) instead of sleeping until it has probably passed. Attach it to the future that
/// logs it (`tracing::instrument::WithSubscriber::with_subscriber`), which works on any worker.
pub(crate) fn log_signal(fragment: &'static str) -> (tracing::Dispatch, std::sync::Arc<tokio::sync::Notify>) {
    use tracing_subscriber::layer::SubscriberExt;
    let notify = std::sync::Arc::new(tokio::sync::Notify::new());
    let layer = LogSignal { fragment, notify: notify.clone() };
    (tracing::Dispatch::new(tracing_subscriber::registry().with(layer)), notify)
}

struct LogSignal {
    fragment: &'static str,
    notify: std::sync::Arc<tokio::sync::Notify>,
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for LogSignal {
    fn on_event(&self, event: &tracing::Event<'_>, _context: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        if message.0.contains(self.fragment) {
            self.notify.notify_one();
        }
    }
}
