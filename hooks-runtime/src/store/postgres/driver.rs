//! What the store needs of tokio-postgres: its errors described (never quoting a row) and
//! classified, its rows read as the shared row mapping's columns, and snapshot reads.

use deadpool_postgres::Object;
use tokio_postgres::{IsolationLevel, Row};

use crate::store::rows::{Columns, Op};
use crate::store::{StoreError, StoreErrorKind};

/// A driver error without the server's `DETAIL` (which can quote a row's values).
/// A read-only transaction on one snapshot (repeatable read), for reads that must agree with each
/// other: a thread and its values, a list of threads and each one in it, a check and the rows.
pub(super) async fn read_snapshot(
    client: &mut Object,
) -> Result<deadpool_postgres::Transaction<'_>, tokio_postgres::Error> {
    client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start().await
}

pub(super) fn describe_pg(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("PostgreSQL {} {}: {}", db.severity(), db.code().code(), db.message()),
        None => {
            // The driver's text names the kind ("error connecting to server"); the cause, such
            // as "Connection refused", is its source.
            let mut text = format!("PostgreSQL: {e}");
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}

/// The kind of a PostgreSQL failure: a lost or refused connection (no answer from the server,
/// SQLSTATE class 08, a server shutting down) is [`StoreErrorKind::Connection`], a uniqueness
/// violation [`StoreErrorKind::Conflict`], a lock or serialization failure
/// [`StoreErrorKind::Busy`].
pub(super) fn pg_kind(e: &tokio_postgres::Error) -> StoreErrorKind {
    use tokio_postgres::error::SqlState;
    let Some(db) = e.as_db_error() else {
        let io = std::iter::successors(std::error::Error::source(e), |cause| cause.source())
            .any(|cause| cause.is::<std::io::Error>());
        return if e.is_closed() || io { StoreErrorKind::Connection } else { StoreErrorKind::Other };
    };
    let code = db.code();
    if code.code().starts_with("08") || code.code().starts_with("57P") {
        StoreErrorKind::Connection
    } else if *code == SqlState::UNIQUE_VIOLATION {
        StoreErrorKind::Conflict
    } else if [SqlState::T_R_SERIALIZATION_FAILURE, SqlState::T_R_DEADLOCK_DETECTED, SqlState::LOCK_NOT_AVAILABLE]
        .contains(code)
    {
        StoreErrorKind::Busy
    } else {
        StoreErrorKind::Other
    }
}

impl Op<'_> {
    /// Maps a PostgreSQL failure, kept as the error's source.
    pub(super) fn pg(&self) -> impl Fn(tokio_postgres::Error) -> StoreError + '_ {
        move |e| self.error(pg_kind(&e), describe_pg(&e)).with_source(e)
    }

    /// Fails with "no such thread" unless the thread exists; `lock` also takes the thread's
    /// writer lock until the transaction ends, so writers of one thread take turns.
    pub(super) async fn ensure_thread(
        &self,
        tx: &tokio_postgres::Transaction<'_>,
        lock: bool,
    ) -> Result<(), StoreError> {
        let sql = if lock {
            "SELECT 1 FROM threads WHERE id = $1 FOR NO KEY UPDATE"
        } else {
            "SELECT 1 FROM threads WHERE id = $1"
        };
        let row = tx.query_opt(sql, &[&self.thread_id]).await.map_err(self.pg())?;
        if row.is_some() { Ok(()) } else { Err(self.error(StoreErrorKind::NotFound, "no such thread")) }
    }
}

impl Columns for Row {
    fn text(&self, op: &Op<'_>, column: usize) -> Result<String, StoreError> {
        self.try_get(column).map_err(op.pg())
    }

    fn opt_text(&self, op: &Op<'_>, column: usize) -> Result<Option<String>, StoreError> {
        self.try_get(column).map_err(op.pg())
    }

    fn int(&self, op: &Op<'_>, column: usize) -> Result<i64, StoreError> {
        self.try_get(column).map_err(op.pg())
    }

    fn opt_int(&self, op: &Op<'_>, column: usize) -> Result<Option<i64>, StoreError> {
        self.try_get(column).map_err(op.pg())
    }

    fn opt_bool(&self, op: &Op<'_>, column: usize) -> Result<Option<bool>, StoreError> {
        self.try_get(column).map_err(op.pg())
    }
}
