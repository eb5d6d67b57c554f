//! The PostgreSQL schema and its migrations.
//!
//! The version lives in the one-row table `hooks_schema_version`. A store that connects takes a
//! transaction-scoped advisory lock for its schema, so two processes starting at once migrate
//! one after the other, then applies every step above the stored version. A database whose
//! version is higher than this build's (written by a newer build) is refused, and so is one that
//! has this store's tables but no version: it was not created by this store.
//!
//! The steps are the files of `migrations/postgres/` in this crate, in the order of their
//! numbers (see that folder's README: a released step is never edited).

use tokio_postgres::Transaction;

/// The schema version this build writes and reads: the number of [`MIGRATIONS`].
pub(super) const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The schema, one step per version: step `n` takes a database from version `n` to `n + 1`.
pub(super) const MIGRATIONS: [&str; 11] = [
    include_str!("../../../migrations/postgres/01_threads_and_messages.sql"),
    include_str!("../../../migrations/postgres/02_events_and_leases.sql"),
    include_str!("../../../migrations/postgres/03_user_events.sql"),
    include_str!("../../../migrations/postgres/04_thread_inbox.sql"),
    include_str!("../../../migrations/postgres/05_user_values.sql"),
    include_str!("../../../migrations/postgres/06_awaiting_approval.sql"),
    include_str!("../../../migrations/postgres/07_parked_tool_calls.sql"),
    include_str!("../../../migrations/postgres/08_one_truth.sql"),
    include_str!("../../../migrations/postgres/09_lease_presence.sql"),
    include_str!("../../../migrations/postgres/10_admission_record.sql"),
    include_str!("../../../migrations/postgres/11_remembered_approvals.sql"),
];

/// The tables this store owns, for telling a foreign database from an empty one.
const OWN_TABLES: [&str; 10] = [
    "threads",
    "messages",
    "thread_values",
    "thread_events",
    "thread_leases",
    "user_events",
    "thread_inbox",
    "user_values",
    "parked_tool_calls",
    "remembered_approvals",
];

/// Brings the schema `search_path` points at up to [`SCHEMA_VERSION`], in the caller's
/// transaction; `schema`, when given, is created first. Errors are plain sentences for
/// [`super::PostgresStore::connect`] to prefix.
pub(super) async fn migrate(tx: &Transaction<'_>, schema: Option<&str>) -> Result<(), String> {
    let pg = |e: tokio_postgres::Error| super::driver::describe_pg(&e);
    let lock_key = format!("hooks-runtime schema {}", schema.unwrap_or("(search_path)"));
    tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&lock_key]).await.map_err(pg)?;
    if let Some(schema) = schema {
        // Looked up first rather than `CREATE SCHEMA IF NOT EXISTS`, whose NOTICE for an existing
        // schema the driver logs at INFO on every start but the first. The advisory lock above
        // makes the look-up and the creation one step among processes.
        let exists: bool = tx
            .query_one("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", &[&schema])
            .await
            .map_err(pg)?
            .get(0);
        if !exists {
            // The name was checked to be a plain lower-case identifier, so it needs no quoting.
            tx.batch_execute(&format!("CREATE SCHEMA {schema}")).await.map_err(pg)?;
        }
    }
    let versioned: bool =
        tx.query_one("SELECT to_regclass('hooks_schema_version') IS NOT NULL", &[]).await.map_err(pg)?.get(0);
    let version: i32 = if versioned {
        let row = tx.query_opt("SELECT version FROM hooks_schema_version", &[]).await.map_err(pg)?;
        row.map(|row| row.get(0)).ok_or("the table `hooks_schema_version` is empty")?
    } else {
        let mut found = Vec::new();
        for table in OWN_TABLES {
            let exists: bool = tx.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table]).await.map_err(pg)?.get(0);
            if exists {
                found.push(format!("`{table}`"));
            }
        }
        if !found.is_empty() {
            return Err(format!(
                "the schema already has tables named like this store's ({}) but no `hooks_schema_version`: \
                 they were not created by this store, which will not adopt or change them; use another schema",
                found.join(", ")
            ));
        }
        tx.batch_execute(
            "CREATE TABLE hooks_schema_version (version INTEGER NOT NULL); INSERT INTO hooks_schema_version VALUES (0)",
        )
        .await
        .map_err(pg)?;
        0
    };
    if version > SCHEMA_VERSION {
        return Err(format!(
            "the database has hooks-runtime schema version {version}, newer than version {SCHEMA_VERSION} that this \
             build reads; connect with a newer hooks-runtime"
        ));
    }
    for (from, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0)) {
        tx.batch_execute(step).await.map_err(|e| {
            format!("migrate the schema from version {from} to {}: {}", from + 1, super::driver::describe_pg(&e))
        })?;
    }
    if version < SCHEMA_VERSION {
        tx.execute("UPDATE hooks_schema_version SET version = $1", &[&SCHEMA_VERSION]).await.map_err(pg)?;
    }
    Ok(())
}
