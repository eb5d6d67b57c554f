//! The SQLite [`MessageStore`]: threads and messages in one file that several processes can share.
//!
//! Several processes on one file are supported: each store opened on a file is an owner
//! (`owner`), a run holds its thread as that owner, and recovery settles only threads whose
//! owner died (O3).
//!
//! Each operation runs on tokio's blocking pool ([`tokio::task::spawn_blocking`]) against a
//! connection behind a mutex that is only locked inside the blocking closure, so no async worker
//! thread ever waits on SQLite. Every write is one immediate transaction; the file is in WAL mode
//! with a busy timeout, so a second process that writes while the first one does waits for its
//! turn instead of failing.
//!
//! Error rule, in one place ([`Op::error`]): a [`StoreError`] names the operation, the thread and,
//! where there is one, the message id; it never quotes message contents (a corrupt JSON column
//! is described by the JSON error's kind and position, not by the text it read).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hooks_core::{HookMessage, MessageUpdate};
use rusqlite::types::{ToSql, ToSqlOutput};
use rusqlite::{
    Connection, OptionalExtension, ParamsFromIter, Row, Transaction, TransactionBehavior, params, params_from_iter,
};
use serde_json::Value;

mod events;
mod owner;
mod schema;
mod user_events;

use self::events::EventHub;
use self::owner::ProcessOwner;
use self::schema::{BUSY_TIMEOUT, MIGRATIONS, SCHEMA_VERSION};
use super::rows::{self, Columns, Op, PARKED_COLUMN_LIST, ParkedColumns, ParkedJson, ThreadColumns, read_message};
use super::{
    ApprovalStore, EventLog, EventSubscription, InboxEntry, InboxStore, InputTake, MessageStore,
    RememberedApprovalStore, RunOwnership, RunPermit, StoreError, StoreErrorKind, TakeStatus, ThreadRecord,
    ThreadStatus, UserChange, UserValue, inbox,
};
use crate::approval_records::{ParkedToolCall, ToolCallChange};
use crate::remembered_approvals::RememberedApproval;

/// How often a store on a file looks for threads whose owner died.
const RECOVERY_SWEEP_INTERVAL: Duration = Duration::from_secs(2);

/// The longest pause between two tries to hold a thread that a live owner runs.
const HOLD_POLL_MAX: Duration = Duration::from_millis(100);

/// The candidates for recovery, each with the owner to ask whether it lives: threads left
/// `running` (with the owner holding them, kind 0), threads with inputs (with the process that
/// accepted each, kind 1), threads waiting for approvals with no call pending (with the owner
/// holding them, kind 0; only once the last decision is older than `?1`, as the decider resumes
/// the turn itself right after). Sorted by thread, so one thread's rows are together.
const UNSETTLED: &str = "
SELECT t.id, o.owner, 0 FROM threads t LEFT JOIN thread_owners o ON o.thread_id = t.id WHERE t.status = 'running'
UNION ALL
SELECT thread_id, owner, 1 FROM thread_inbox
UNION ALL
SELECT t.id, o.owner, 0 FROM threads t LEFT JOIN thread_owners o ON o.thread_id = t.id
WHERE t.status = 'awaiting_approval' AND NOT EXISTS (
    SELECT 1 FROM parked_tool_calls p WHERE p.thread_id = t.id AND p.settled = 0
    AND (p.state = 'pending' OR p.decided_at > ?1)
)
ORDER BY 1";

/// The rows of a thread that [`read_message`] cannot read, as SQL, so that a write can refuse a
/// thread whose history is unreadable without decoding every row. Column types are enforced by
/// the STRICT tables; this checks what they cannot.
const CORRUPT_ROW: &str = "
SELECT seq, id FROM messages
WHERE thread_id = ?1
  AND (role NOT IN ('system', 'user', 'assistant', 'tool')
       OR (depth IS NOT NULL AND (depth < 0 OR depth > 4294967295))
       OR CASE WHEN json_valid(extra) THEN json_type(extra) <> 'object' ELSE 1 END)
ORDER BY seq LIMIT 1";

/// The message columns in the order [`read_message`] reads them and [`message_params`] binds
/// them.
const MESSAGE_COLUMN_LIST: [&str; 11] = [
    "id",
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "created_at",
    "parent_id",
    "depth",
    "silent",
    "extra",
];

/// The insert of a message row: the thread (`?1`), its `seq` (`?2`), then
/// [`MESSAGE_COLUMN_LIST`] from `?3` on, as [`message_params`] binds them.
static INSERT_MESSAGE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let placeholders = (0..MESSAGE_COLUMN_LIST.len()).map(|i| format!("?{}", i + 3)).collect::<Vec<_>>();
    format!(
        "INSERT INTO messages (thread_id, seq, {}) VALUES (?1, ?2, {})",
        MESSAGE_COLUMN_LIST.join(", "),
        placeholders.join(", ")
    )
});

/// [`MESSAGE_COLUMN_LIST`] and the row's place in its thread, for reading.
const READ_COLUMNS: &str =
    "id, role, content, name, tool_calls, tool_call_id, created_at, parent_id, depth, silent, extra, seq";

/// A [`MessageStore`] in an SQLite database: a file shared by processes, or memory.
///
/// Cloning is cheap: clones share one connection.
///
/// ```
/// use hooks_runtime::store::{MessageStore, SqliteStore, ThreadRecord};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let store = SqliteStore::in_memory()?;
/// let thread = ThreadRecord::new("t1", "support", 1_700_000_000_000);
/// store.create_thread(&thread).await?;
/// assert_eq!(store.load_thread("t1").await?, Some(thread));
/// # Ok::<(), hooks_runtime::store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    path: Option<PathBuf>,
    /// This store as the owner of the runs it holds, for a file (O3); `None` in memory, where
    /// no other process can reach the database.
    owner: Option<Arc<ProcessOwner>>,
    /// The followers of this file's thread events, for a file (O5); `None` in memory, where no
    /// other process can follow.
    events: Option<Arc<EventHub>>,
}

impl SqliteStore {
    /// Opens the database file at `path`, creating the file and its schema if needed.
    ///
    /// The file is put in WAL mode and every statement waits up to a few seconds for another
    /// process's lock. Several processes may open one file and run its threads: the store keeps
    /// a lock file of its own in the folder `<path>.owners` while it lives, by which the others
    /// tell that its runs are live (O3), so the folder beside the file must be writable. A file of an older schema version is migrated in place; a file written by
    /// a newer version of this crate (a higher schema version) is refused, and so is a database
    /// that already has tables but no schema version: it belongs to another program, and
    /// this store neither adopts nor changes it. This call blocks: from async code, call it in
    /// [`spawn_blocking`](tokio::task::spawn_blocking) or before the runtime starts.
    ///
    /// ```no_run
    /// use hooks_runtime::store::SqliteStore;
    ///
    /// let store = SqliteStore::open("threads.db")?;
    /// assert_eq!(store.path(), Some(std::path::Path::new("threads.db")));
    /// # Ok::<(), hooks_runtime::store::StoreError>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let open_error = |(kind, detail): (StoreErrorKind, String)| {
            StoreError::new(kind, format!("open `{}`: {detail}", path.display()))
        };
        let mut connection = Connection::open(&path).map_err(|e| open_error((sql_kind(&e), e.to_string())))?;
        prepare(&mut connection, true).map_err(open_error)?;
        let owner = ProcessOwner::register(&path).map_err(|e| {
            open_error((
                StoreErrorKind::Connection,
                format!("register this process as an owner in `{}.owners`: {e}", path.display()),
            ))
        })?;
        Ok(Self {
            connection: Arc::new(Mutex::new(connection)),
            path: Some(path),
            owner: Some(Arc::new(owner)),
            events: Some(Arc::new(EventHub::new())),
        })
    }

    /// A new, empty database in memory, gone when the store (and its clones) are dropped.
    ///
    /// ```
    /// use hooks_runtime::store::SqliteStore;
    ///
    /// let store = SqliteStore::in_memory()?;
    /// assert_eq!(store.path(), None);
    /// # Ok::<(), hooks_runtime::store::StoreError>(())
    /// ```
    pub fn in_memory() -> Result<Self, StoreError> {
        let open_error = |(kind, detail): (StoreErrorKind, String)| {
            StoreError::new(kind, format!("open in-memory database: {detail}"))
        };
        let mut connection = Connection::open_in_memory().map_err(|e| open_error((sql_kind(&e), e.to_string())))?;
        prepare(&mut connection, false).map_err(open_error)?;
        Ok(Self { connection: Arc::new(Mutex::new(connection)), path: None, owner: None, events: None })
    }

    /// The database file, or `None` for a store in memory.
    ///
    /// ```no_run
    /// use hooks_runtime::store::SqliteStore;
    ///
    /// let store = SqliteStore::open("/var/lib/agent/threads.db")?;
    /// println!("threads are kept in {}", store.path().unwrap().display());
    /// # Ok::<(), hooks_runtime::store::StoreError>(())
    /// ```
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The file's event hub; an error in memory, where the store hands out no [`EventLog`].
    fn hub(&self) -> Result<&Arc<EventHub>, StoreError> {
        self.events
            .as_ref()
            .ok_or_else(|| StoreError::new(StoreErrorKind::Unsupported, "an in-memory SQLite store keeps no event log"))
    }

    /// Appends `events` to the file's event log, then wakes this store's followers.
    async fn append_events(&self, thread_id: &str, batch: &[crate::events::ThreadEvent]) -> Result<(), StoreError> {
        let Some(hub) = self.events.clone() else { return Ok(()) };
        let op = Op::thread("publish_event", thread_id);
        let encoded = batch
            .iter()
            .map(|event| serde_json::to_string(event).map_err(|e| op.error(StoreErrorKind::Other, e)))
            .collect::<Result<Vec<_>, _>>()?;
        let thread_id = thread_id.to_owned();
        self.run("publish_event", move |connection| events::append(connection, &thread_id, &encoded)).await?;
        hub.wake();
        Ok(())
    }

    /// One try to hold `thread_id` as `owner`: `Some(took_over_a_dead_run)` once held, `None`
    /// while a live owner holds it.
    async fn try_hold(&self, owner: &Arc<ProcessOwner>, thread_id: &str) -> Result<Option<bool>, StoreError> {
        let owner = owner.clone();
        self.run_op(Op::thread("hold_run", thread_id), move |connection, op| {
            let held = in_transaction(connection, op, TransactionBehavior::Immediate, |tx| hold_in(op, tx, &owner))?;
            // Noted after the commit and under the connection's lock, so this store counts as
            // the live holder exactly when its owner row is in.
            if held.is_some() {
                owner.note_holding(op.thread_id, true);
            }
            Ok(held)
        })
        .await
    }

    /// Gives `thread_id` back: the owner row goes, if it is still this owner's (a run that set
    /// its final status took it with that write already, so this commits no change).
    async fn release_hold(&self, owner: &Arc<ProcessOwner>, thread_id: &str) {
        let owner = owner.clone();
        let released = self
            .run_op(Op::thread("release_hold", thread_id), move |connection, op| {
                let result = connection
                    .prepare_cached("DELETE FROM thread_owners WHERE thread_id = ?1 AND owner = ?2")
                    .and_then(|mut statement| statement.execute([op.thread_id, owner.id()]))
                    .map_err(op.sql());
                owner.note_holding(op.thread_id, false);
                result.map(|_| ())
            })
            .await;
        if let Err(error) = released {
            // The row stays; this owner's next hold takes it back, and another process takes it
            // once this one is gone.
            tracing::warn!(target: "hooks_runtime::store", "could not release a thread's owner row: {error}");
        }
    }

    /// Runs `action` on the connection in tokio's blocking pool; the mutex is held only there.
    async fn run<T: Send + 'static>(
        &self,
        operation: &'static str,
        action: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = Arc::clone(&self.connection);
        tokio::task::spawn_blocking(move || {
            let mut connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
            action(&mut connection)
        })
        .await
        .map_err(|e| {
            let what = if e.is_panic() { "panicked" } else { "was cancelled" };
            StoreError::other(format!("{operation}: the blocking task {what}"))
        })?
    }

    /// [`run`](Self::run) for `op`, which `action` gets back in the blocking pool: an operation
    /// names itself and its ids once, and every error it gives names them.
    async fn run_op<T: Send + 'static>(
        &self,
        op: Op<'_>,
        action: impl FnOnce(&mut Connection, &Op<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let op = OwnedOp::of(&op);
        self.run(op.name, move |connection| action(connection, &op.op())).await
    }

    /// `action` in one transaction of `behavior`, committed when it succeeds: a read of several
    /// statements is deferred, so they see one snapshot.
    async fn transact<T: Send + 'static>(
        &self,
        op: Op<'_>,
        behavior: TransactionBehavior,
        action: impl FnOnce(&Transaction<'_>, &Op<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.run_op(op, move |connection, op| in_transaction(connection, op, behavior, |tx| action(tx, op))).await
    }

    /// A write: [`transact`](Self::transact) in an immediate transaction, which takes the file's
    /// write lock at its start, so a write never fails half way for another process's lock.
    async fn write<T: Send + 'static>(
        &self,
        op: Op<'_>,
        action: impl FnOnce(&Transaction<'_>, &Op<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.transact(op, TransactionBehavior::Immediate, action).await
    }
}

/// An [`Op`] that owns its ids, to move into the blocking pool.
struct OwnedOp {
    name: &'static str,
    thread_id: String,
    message_id: Option<String>,
    row: Option<i64>,
}

impl OwnedOp {
    fn of(op: &Op<'_>) -> Self {
        OwnedOp {
            name: op.name,
            thread_id: op.thread_id.to_owned(),
            message_id: op.message_id.map(str::to_owned),
            row: op.row,
        }
    }

    fn op(&self) -> Op<'_> {
        Op { name: self.name, thread_id: &self.thread_id, message_id: self.message_id.as_deref(), row: self.row }
    }
}

/// `try_hold`'s transaction: the thread's owner row becomes `owner`'s unless a live owner
/// holds it (`None`); `Some(took_over_a_dead_run)` once written.
fn hold_in(op: &Op<'_>, tx: &Transaction<'_>, owner: &ProcessOwner) -> Result<Option<bool>, StoreError> {
    let thread_id = op.thread_id;
    ensure_thread(op, tx)?;
    let holder: Option<String> = tx
        .prepare_cached("SELECT owner FROM thread_owners WHERE thread_id = ?1")
        .and_then(|mut statement| statement.query_row([thread_id], |row| row.get(0)).optional())
        .map_err(op.sql())?;
    if holder.as_deref().is_some_and(|holder| owner.is_alive(holder, thread_id)) {
        return Ok(None);
    }
    tx.prepare_cached(
        "INSERT INTO thread_owners (thread_id, owner, since) VALUES (?1, ?2, ?3)
         ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner, since = excluded.since",
    )
    .and_then(|mut statement| statement.execute(params![thread_id, owner.id(), crate::ids::now_ms()]))
    .map_err(op.sql())?;
    // A thread still `running` that no live owner holds was left so by a run that died.
    let (failed, reason) = rows::status_columns(&ThreadStatus::Failed(super::FailReason::OwnerLost));
    let took_over = tx
        .prepare_cached("UPDATE threads SET status = ?2, status_reason = ?3 WHERE id = ?1 AND status = 'running'")
        .and_then(|mut statement| statement.execute(params![thread_id, failed, reason]))
        .map_err(op.sql())?;
    Ok(Some(took_over == 1))
}

/// Runs `action` in one transaction of `behavior`, committed when it succeeds (and rolled back,
/// by the drop, when it fails).
fn in_transaction<T>(
    connection: &mut Connection,
    op: &Op<'_>,
    behavior: TransactionBehavior,
    action: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let tx = connection.transaction_with_behavior(behavior).map_err(op.sql())?;
    let value = action(&tx)?;
    tx.commit().map_err(op.sql())?;
    Ok(value)
}

/// Sets the connection up: busy timeout, WAL (for files), foreign keys, then the schema.
fn prepare(connection: &mut Connection, file: bool) -> Result<(), (StoreErrorKind, String)> {
    let sql = |e: rusqlite::Error| (sql_kind(&e), e.to_string());
    connection.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
    if file {
        let mode: String = connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)).map_err(sql)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(journal_mode = %mode, "SQLite message store: WAL mode unavailable, using the journal mode the file has");
        }
    }
    connection.pragma_update(None, "foreign_keys", true).map_err(sql)?;

    // An immediate transaction, so two processes creating the same file do not race.
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0)).map_err(sql)?;
    if version > SCHEMA_VERSION {
        return Err((
            StoreErrorKind::Corrupt,
            format!(
                "the file has schema version {version}, newer than version {SCHEMA_VERSION} that this build of \
             hooks-runtime reads; open it with a newer hooks-runtime"
            ),
        ));
    }
    if version == 0 {
        let tables: Vec<String> = {
            let mut statement = tx
                .prepare(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
                )
                .map_err(sql)?;
            statement.query_map([], |row| row.get(0)).and_then(Iterator::collect).map_err(sql)?
        };
        if !tables.is_empty() {
            let tables = tables.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ");
            return Err((
                StoreErrorKind::Corrupt,
                format!(
                    "the database already has tables ({tables}) but no hooks-runtime schema version (user_version 0): \
                 it was not created by this store, which will not adopt or change it; use a new file"
                ),
            ));
        }
    }
    for (from, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0)) {
        tx.execute_batch(step)
            .map_err(|e| (sql_kind(&e), format!("migrate the schema from version {from} to {}: {e}", from + 1)))?;
    }
    if version < SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(sql)?;
    }
    tx.commit().map_err(sql)
}

/// The kind of an SQLite failure: a file that cannot be opened is [`StoreErrorKind::Connection`],
/// a lock held past the busy timeout [`StoreErrorKind::Busy`], a uniqueness violation (or a
/// second result of a tool call, refused by a trigger) [`StoreErrorKind::Conflict`], a file that is no database [`StoreErrorKind::Corrupt`].
fn sql_kind(e: &rusqlite::Error) -> StoreErrorKind {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => StoreErrorKind::Connection,
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => StoreErrorKind::Corrupt,
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreErrorKind::Busy,
        Some(ErrorCode::ConstraintViolation)
            if matches!(e, rusqlite::Error::SqliteFailure(failure, _)
                if failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    || failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_TRIGGER) =>
        {
            StoreErrorKind::Conflict
        }
        _ => StoreErrorKind::Other,
    }
}

impl Op<'_> {
    /// Maps an SQLite failure (whose text names tables and constraints, never values), kept as
    /// the error's source.
    fn sql(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| self.error(sql_kind(&e), format_args!("SQLite: {e}")).with_source(e)
    }
}

/// A status write's owner row, in its transaction. A run that a hold of this store holds owns
/// the thread while its status is `running` (`running`: the row is this owner's, written again
/// when a write between took it), and gives it up with the status that ends it (the row goes,
/// so the hold's release writes nothing). A status written without a hold of this store
/// changes no row.
fn owner_row(
    op: &Op<'_>,
    tx: &Transaction<'_>,
    owner: &ProcessOwner,
    thread_id: &str,
    running: bool,
) -> Result<(), StoreError> {
    if !owner.holds(thread_id) {
        return Ok(());
    }
    let written = if running {
        tx.prepare_cached(
            "INSERT INTO thread_owners (thread_id, owner, since) VALUES (?1, ?2, ?3)
             ON CONFLICT (thread_id) DO UPDATE SET owner = excluded.owner WHERE owner <> excluded.owner",
        )
        .and_then(|mut statement| statement.execute(params![thread_id, owner.id(), crate::ids::now_ms()]))
    } else {
        tx.prepare_cached("DELETE FROM thread_owners WHERE thread_id = ?1 AND owner = ?2")
            .and_then(|mut statement| statement.execute([thread_id, owner.id()]))
    };
    written.map(|_| ()).map_err(op.sql())
}

/// Fails with "no thread" unless the thread `op` names exists.
fn ensure_thread(op: &Op<'_>, tx: &Transaction<'_>) -> Result<(), StoreError> {
    let exists: bool = tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM threads WHERE id = ?1)")
        .and_then(|mut statement| statement.query_row([op.thread_id], |row| row.get(0)))
        .map_err(op.sql())?;
    if exists { Ok(()) } else { Err(op.error(StoreErrorKind::NotFound, "no such thread")) }
}

/// Fails, naming the first unreadable row, when the thread has a row that
/// [`read_message`] would reject: a write never adds to a history that cannot be read back.
fn ensure_readable(op: &Op<'_>, tx: &Transaction<'_>) -> Result<(), StoreError> {
    let corrupt: Option<(i64, String)> = tx
        .prepare_cached(CORRUPT_ROW)
        .and_then(|mut statement| statement.query_row([op.thread_id], |row| Ok((row.get(0)?, row.get(1)?))).optional())
        .map_err(op.sql())?;
    match corrupt {
        None => Ok(()),
        Some((row, message_id)) => Err(op.error(
            StoreErrorKind::Corrupt,
            format_args!(
                "the thread's stored history is unreadable at message `{message_id}` (row {row}), so nothing \
                 more is written to it; repair or delete that row"
            ),
        )),
    }
}

impl Columns for Row<'_> {
    fn text(&self, op: &Op<'_>, column: usize) -> Result<String, StoreError> {
        self.get(column).map_err(op.sql())
    }

    fn opt_text(&self, op: &Op<'_>, column: usize) -> Result<Option<String>, StoreError> {
        self.get(column).map_err(op.sql())
    }

    fn int(&self, op: &Op<'_>, column: usize) -> Result<i64, StoreError> {
        self.get(column).map_err(op.sql())
    }

    fn opt_int(&self, op: &Op<'_>, column: usize) -> Result<Option<i64>, StoreError> {
        self.get(column).map_err(op.sql())
    }

    fn opt_bool(&self, op: &Op<'_>, column: usize) -> Result<Option<bool>, StoreError> {
        self.get(column).map_err(op.sql())
    }
}

/// Upserts one thread value; the caller's transaction makes it atomic with what goes with it.
fn write_value(op: &Op<'_>, tx: &Transaction<'_>, key: &str, value: &Value) -> Result<(), StoreError> {
    let json = rows::encode(op, format_args!("thread value `{key}`"), value)?;
    tx.execute(
        "INSERT INTO thread_values (thread_id, key, value) VALUES (?1, ?2, ?3)
         ON CONFLICT (thread_id, key) DO UPDATE SET value = excluded.value",
        params![op.thread_id, key, json],
    )
    .map_err(op.sql())?;
    Ok(())
}

/// Every value of the thread, key and JSON text, in key order.
fn read_values(op: &Op<'_>, connection: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut statement = connection
        .prepare_cached("SELECT key, value FROM thread_values WHERE thread_id = ?1 ORDER BY key")
        .map_err(op.sql())?;
    let rows = statement.query_map([op.thread_id], |row| Ok((row.get(0)?, row.get(1)?))).map_err(op.sql())?;
    rows.collect::<Result<_, _>>().map_err(op.sql())
}

/// The parameters of a message row's insert and update: `?1` the thread, `?2` `key` (the new
/// row's `seq`, or the updated row's id), then the message's [`MESSAGE_COLUMN_LIST`] from `?3`
/// on, in that order. The one place the columns meet the message's fields.
fn message_params<'a>(
    thread_id: &'a str,
    key: &'a dyn ToSql,
    message: &'a HookMessage,
    extra: &'a str,
) -> rusqlite::Result<ParamsFromIter<[ToSqlOutput<'a>; 13]>> {
    Ok(params_from_iter([
        thread_id.to_sql()?,
        key.to_sql()?,
        message.id.to_sql()?,
        message.role.as_str().to_sql()?,
        message.content.to_sql()?,
        message.name.to_sql()?,
        message.tool_calls.to_sql()?,
        message.tool_call_id.to_sql()?,
        message.created_at.to_sql()?,
        message.parent_id.to_sql()?,
        message.depth.to_sql()?,
        message.silent.to_sql()?,
        extra.to_sql()?,
    ]))
}

/// The thread `op` names and its values, read in the caller's transaction.
fn read_thread(op: &Op<'_>, connection: &Connection) -> Result<Option<ThreadRecord>, StoreError> {
    let columns = {
        let mut statement = connection
            .prepare_cached(
                "SELECT agent, user_id, created_at, arguments, status, status_reason FROM threads WHERE id = ?1",
            )
            .map_err(op.sql())?;
        let mut rows = statement.query([op.thread_id]).map_err(op.sql())?;
        match rows.next().map_err(op.sql())? {
            Some(row) => ThreadColumns::read(op, row)?,
            None => return Ok(None),
        }
    };
    columns.into_record(op, read_values(op, connection)?).map(Some)
}

/// Inserts `message` as the thread's next row, in the caller's transaction: refused for an unknown
/// thread, an unreadable history, or an id the thread already has.
fn insert_row(op: &Op<'_>, tx: &Transaction<'_>, message: &HookMessage) -> Result<(), StoreError> {
    let thread_id = op.thread_id;
    let extra = rows::extra_json(op, message)?;
    ensure_thread(op, tx)?;
    ensure_readable(&Op::thread(op.name, thread_id), tx)?;
    // Cached statements: a turn inserts several messages, and parsing is most of a small write.
    let exists: bool = tx
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM messages WHERE thread_id = ?1 AND id = ?2)")
        .and_then(|mut statement| statement.query_row([thread_id, &message.id], |row| row.get(0)))
        .map_err(op.sql())?;
    if exists {
        return Err(op.error(StoreErrorKind::Conflict, "the message already exists"));
    }
    let seq: i64 = tx
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE thread_id = ?1")
        .and_then(|mut statement| statement.query_row([thread_id], |row| row.get(0)))
        .map_err(op.sql())?;
    let params = message_params(thread_id, &seq, message, &extra).map_err(op.sql())?;
    tx.prepare_cached(&INSERT_MESSAGE).and_then(|mut statement| statement.execute(params)).map_err(op.sql())?;
    Ok(())
}

#[async_trait::async_trait]
impl MessageStore for SqliteStore {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        let record = thread.clone();
        self.write(Op::thread("create_thread", &thread.id), move |tx, op| {
            let arguments = rows::encode(op, "the arguments", &record.arguments)?;
            let (status, reason) = rows::status_columns(&record.status);
            let exists: bool = tx
                .query_row("SELECT EXISTS (SELECT 1 FROM threads WHERE id = ?1)", [&record.id], |row| row.get(0))
                .map_err(op.sql())?;
            if exists {
                return Err(op.error(StoreErrorKind::Conflict, "the thread already exists"));
            }
            tx.execute(
                "INSERT INTO threads (id, agent, user_id, created_at, arguments, status, status_reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![record.id, record.agent, record.user_id, record.created_at, arguments, status, reason],
            )
            .map_err(op.sql())?;
            for (key, value) in &record.values {
                write_value(op, tx, key, value)?;
            }
            Ok(())
        })
        .await
    }

    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        // A read transaction: the thread and its values are one snapshot.
        self.transact(Op::thread("load_thread", thread_id), TransactionBehavior::Deferred, |tx, op| read_thread(op, tx))
            .await
    }

    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        let user_id = user_id.to_owned();
        self.run("threads_of_user", move |connection| {
            let fail = |e: rusqlite::Error| {
                StoreError::new(sql_kind(&e), format!("threads_of_user: user `{user_id}`: SQLite: {e}")).with_source(e)
            };
            // One snapshot for the list and every thread in it.
            let tx = connection.transaction().map_err(fail)?;
            let ids: Vec<String> = {
                let mut statement =
                    tx.prepare("SELECT id FROM threads WHERE user_id = ?1 ORDER BY created_at, id").map_err(fail)?;
                let rows = statement.query_map([&user_id], |row| row.get(0)).map_err(fail)?;
                rows.collect::<Result<_, _>>().map_err(fail)?
            };
            let mut threads = Vec::with_capacity(ids.len());
            for id in &ids {
                let op = Op::thread("threads_of_user", id);
                threads.extend(read_thread(&op, &tx)?);
            }
            tx.commit().map_err(fail)?;
            Ok(threads)
        })
        .await
    }

    async fn set_value(&self, thread_id: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        let (key, value) = (key.to_owned(), value.clone());
        self.write(Op::thread("set_value", thread_id), move |tx, op| {
            ensure_thread(op, tx)?;
            write_value(op, tx, &key, &value)
        })
        .await
    }

    /// Sets the status, and this store's owner row of the thread in the same transaction (see
    /// `owner_row`): a run's end costs one commit.
    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        let running = *status == ThreadStatus::Running;
        let owner = self.owner.clone();
        let status = status.clone();
        self.write(Op::thread("set_status", thread_id), move |tx, op| {
            let (status, reason) = rows::status_columns(&status);
            let changed = tx
                .prepare_cached("UPDATE threads SET status = ?2, status_reason = ?3 WHERE id = ?1")
                .and_then(|mut statement| statement.execute(params![op.thread_id, status, reason]))
                .map_err(op.sql())?;
            if changed == 0 {
                return Err(op.error(StoreErrorKind::NotFound, "no such thread"));
            }
            match &owner {
                Some(owner) => owner_row(op, tx, owner, op.thread_id, running),
                None => Ok(()),
            }
        })
        .await
    }

    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<(), StoreError> {
        let op = Op::message("insert_message", thread_id, &message.id);
        let message = message.clone();
        self.write(op, move |tx, op| insert_row(op, tx, &message)).await
    }

    async fn hand_off(&self, thread_id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError> {
        let (agent, message) = (agent.to_owned(), message.cloned());
        self.write(Op::thread("hand_off", thread_id), move |tx, op| {
            if let Some(message) = &message {
                insert_row(&Op::message(op.name, op.thread_id, &message.id), tx, message)?;
            }
            let changed = tx
                .prepare_cached("UPDATE threads SET agent = ?2 WHERE id = ?1")
                .and_then(|mut statement| statement.execute([op.thread_id, &agent]))
                .map_err(op.sql())?;
            if changed == 0 {
                return Err(op.error(StoreErrorKind::NotFound, "no such thread"));
            }
            Ok(())
        })
        .await
    }

    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        let update = update.clone();
        self.write(Op::message("update_message", thread_id, message_id), move |tx, op| {
            let (thread_id, message_id) = (op.thread_id, op.message_id.unwrap_or_default());
            ensure_thread(op, tx)?;
            let mut message = {
                let mut statement = tx
                    .prepare(&format!("SELECT {READ_COLUMNS} FROM messages WHERE thread_id = ?1 AND id = ?2"))
                    .map_err(op.sql())?;
                let mut rows = statement.query([thread_id, message_id]).map_err(op.sql())?;
                match rows.next().map_err(op.sql())? {
                    Some(row) => read_message(op.name, thread_id, row)?,
                    None => return Err(op.error(StoreErrorKind::NotFound, "no such message")),
                }
            };
            update.apply_to(&mut message);
            let extra = rows::extra_json(op, &message)?;
            // Every column is written, the id too: it is the row's own (`apply_to` keeps it).
            let assignments = MESSAGE_COLUMN_LIST
                .iter()
                .enumerate()
                .map(|(i, column)| format!("{column} = ?{}", i + 3))
                .collect::<Vec<_>>();
            tx.execute(
                &format!("UPDATE messages SET {} WHERE thread_id = ?1 AND id = ?2", assignments.join(", ")),
                message_params(thread_id, &message_id, &message, &extra).map_err(op.sql())?,
            )
            .map_err(op.sql())?;
            Ok(message)
        })
        .await
    }

    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError> {
        // A read transaction: the existence check and the rows see one snapshot.
        self.transact(Op::thread("messages", thread_id), TransactionBehavior::Deferred, |tx, op| {
            ensure_thread(op, tx)?;
            let mut statement = tx
                .prepare(&format!("SELECT {READ_COLUMNS} FROM messages WHERE thread_id = ?1 ORDER BY seq"))
                .map_err(op.sql())?;
            let mut rows = statement.query([op.thread_id]).map_err(op.sql())?;
            let mut messages = Vec::new();
            while let Some(row) = rows.next().map_err(op.sql())? {
                messages.push(read_message(op.name, op.thread_id, row)?);
            }
            Ok(messages)
        })
        .await
    }

    /// Threads left `running`, threads with inputs in their inbox, and threads waiting for
    /// approvals with no call left to decide, leaving out those a live owner holds and the
    /// inputs a live process accepted (O3): another process on the file runs its own.
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        let owner = self.owner.clone();
        self.run("unsettled_threads", move |connection| {
            let fail = |e: rusqlite::Error| {
                StoreError::new(sql_kind(&e), format!("unsettled_threads: SQLite: {e}")).with_source(e)
            };
            let mut statement = connection.prepare(UNSETTLED).map_err(fail)?;
            let decided_before = crate::ids::now_ms()
                - i64::try_from(crate::approval_records::RESUME_GRACE.as_millis()).unwrap_or(i64::MAX);
            let rows = statement
                .query_map([decided_before], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?, row.get::<_, i64>(2)? == 1))
                })
                .map_err(fail)?;
            let mut unsettled = Vec::new();
            for row in rows {
                let (thread_id, holder, input) = row.map_err(fail)?;
                let alive = match (&owner, &holder) {
                    // An input this store accepted is its own to run, whenever its run comes.
                    (Some(owner), Some(holder)) if input && holder == owner.id() => true,
                    (Some(owner), Some(holder)) => owner.is_alive(holder, &thread_id),
                    _ => false,
                };
                if !alive && unsettled.last() != Some(&thread_id) {
                    unsettled.push(thread_id);
                }
            }
            Ok(unsettled)
        })
        .await
    }

    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        let user_id = user_id.to_owned();
        self.run("user_values", move |connection| {
            let fail = rows::user_error("user_values", &user_id);
            let mut statement = connection
                .prepare_cached("SELECT key, value, updated_at FROM user_values WHERE user_id = ?1 ORDER BY key")
                .map_err(|e| fail(format!("SQLite: {e}")))?;
            let mut rows = statement.query([&user_id]).map_err(|e| fail(format!("SQLite: {e}")))?;
            let mut values = Vec::new();
            while let Some(row) = rows.next().map_err(|e| fail(format!("SQLite: {e}")))? {
                let read = |row: &Row<'_>| -> rusqlite::Result<(String, String, i64)> {
                    Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                };
                let (key, json, updated_at) = read(row).map_err(|e| fail(format!("SQLite: {e}")))?;
                values.push(UserValue { value: rows::user_value(&fail, &key, &json)?, key, updated_at });
            }
            Ok(values)
        })
        .await
    }

    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Option<Value>, StoreError> {
        let user_id = user_id.to_owned();
        let key = key.to_owned();
        let json = value
            .map(|value| rows::encode_user_value(&rows::user_error("set_user_value", &user_id), &key, value))
            .transpose()?;
        self.run("set_user_value", move |connection| {
            let fail = rows::user_error("set_user_value", &user_id);
            let sql = |e: rusqlite::Error| fail(format!("SQLite: {e}"));
            // Immediate: the old value is read under the write lock, so no other writer comes
            // between the read and the write.
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
            let old: Option<String> = tx
                .query_row("SELECT value FROM user_values WHERE user_id = ?1 AND key = ?2", [&user_id, &key], |row| {
                    row.get(0)
                })
                .optional()
                .map_err(sql)?;
            match &json {
                Some(json) => tx.execute(
                    "INSERT INTO user_values (user_id, key, value, updated_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    params![user_id, key, json, crate::ids::now_ms()],
                ),
                None => tx.execute("DELETE FROM user_values WHERE user_id = ?1 AND key = ?2", [&user_id, &key]),
            }
            .map_err(sql)?;
            tx.commit().map_err(sql)?;
            old.map(|old| rows::user_value(&fail, &key, &old)).transpose()
        })
        .await
    }

    fn inbox(&self) -> Option<&dyn InboxStore> {
        Some(self)
    }

    fn approvals(&self) -> Option<&dyn ApprovalStore> {
        Some(self)
    }

    fn remembered_approvals(&self) -> Option<&dyn RememberedApprovalStore> {
        Some(self)
    }

    /// On a file, which several processes may share (O3); in memory, one process owns it.
    fn run_ownership(&self) -> Option<&dyn RunOwnership> {
        self.owner.as_ref().map(|_| self as &dyn RunOwnership)
    }

    /// On a file, which other processes may follow (O5): every event is appended to the
    /// file's event log. In memory, none.
    fn event_log(&self) -> Option<&dyn EventLog> {
        self.events.as_ref().map(|_| self as &dyn EventLog)
    }
}

#[async_trait::async_trait]
impl RunOwnership for SqliteStore {
    /// Every few seconds: a thread whose owner died is settled (and its accepted inputs run) by
    /// a live process without waiting for a restart.
    fn recovery_sweep_interval(&self) -> Duration {
        RECOVERY_SWEEP_INTERVAL
    }

    /// Holds the thread as this store's owner (O3): waits while a live owner (another process,
    /// or another runtime of this store) runs it, and takes it over from a dead one, whose run
    /// left `running` becomes `failed (owner_lost)` in the same transaction, for the runtime to
    /// settle.
    async fn hold_run(&self, thread_id: &str) -> Result<RunPermit, StoreError> {
        let owner = self.owner.clone().ok_or_else(|| {
            StoreError::new(StoreErrorKind::Unsupported, "an in-memory SQLite store has no run owners")
        })?;
        let mut pause = Duration::from_millis(5);
        let mut waiting = false;
        let took_over = loop {
            if let Some(took_over) = self.try_hold(&owner, thread_id).await? {
                break took_over;
            }
            if !waiting {
                waiting = true;
                tracing::debug!(target: "hooks_runtime::store", thread = %thread_id, "another live owner runs the thread; this run waits for its end");
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(HOLD_POLL_MAX);
        };
        let (store, thread_id) = (self.clone(), thread_id.to_owned());
        Ok(RunPermit::new(move || async move { store.release_hold(&owner, &thread_id).await })
            .after_a_dead_run(took_over))
    }
}

#[async_trait::async_trait]
impl EventLog for SqliteStore {
    /// One transaction for the whole batch.
    async fn publish_events(&self, thread_id: &str, events: &[crate::events::ThreadEvent]) -> Result<(), StoreError> {
        self.append_events(thread_id, events).await
    }

    /// Follows the thread's events on the file, every process's: another process's reach the
    /// follower within about 100 ms of their commit, this store's at once.
    async fn subscribe_events(&self, thread_id: &str) -> Result<EventSubscription, StoreError> {
        let start = self.latest_event_seq(thread_id).await?;
        Ok(events::follow(self.connection.clone(), self.hub()?, thread_id.to_owned(), start))
    }

    async fn latest_event_seq(&self, thread_id: &str) -> Result<u64, StoreError> {
        let thread_id = thread_id.to_owned();
        self.run("latest_event_seq", move |connection| events::last_seq(connection, &thread_id)).await
    }

    /// A row of `user_events`; this store's followers are woken at once, other processes'
    /// within their watch interval.
    async fn publish_user_change(&self, change: &UserChange) -> Result<(), StoreError> {
        let hub = self.hub()?.clone();
        let change = change.clone();
        self.run("publish_user_change", move |connection| user_events::append(connection, &change)).await?;
        hub.wake();
        Ok(())
    }

    async fn user_changes(&self) -> Result<tokio::sync::mpsc::Receiver<UserChange>, StoreError> {
        user_events::follow(self.connection.clone(), self.hub()?).await
    }
}

#[async_trait::async_trait]
impl InboxStore for SqliteStore {
    async fn enqueue_input(&self, thread_id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        let op = Op::message("enqueue_input", thread_id, &entry.id);
        let message = inbox::encode(entry).map_err(|e| op.error(StoreErrorKind::Other, e))?;
        let at = entry.enqueued_at;
        let owner = self.owner.as_ref().map(|owner| owner.id().to_owned());
        self.write(op, move |tx, op| {
            ensure_thread(op, tx)?;
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO thread_inbox (thread_id, id, message, enqueued_at, owner) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (thread_id, id) DO NOTHING",
                )
                .and_then(|mut statement| statement.execute(params![op.thread_id, op.message_id, message, at, owner]))
                .map_err(op.sql())?;
            if inserted == 0 {
                return Err(op.error(StoreErrorKind::Conflict, "the inbox entry already exists"));
            }
            Ok(())
        })
        .await
    }

    async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        self.run_op(Op::thread("pending_inputs", thread_id), |connection, op| {
            let mut statement = connection
                .prepare_cached("SELECT id, message, enqueued_at FROM thread_inbox WHERE thread_id = ?1 ORDER BY seq")
                .map_err(op.sql())?;
            let rows = statement
                .query_map([op.thread_id], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get(2)?)))
                .map_err(op.sql())?;
            let mut entries = Vec::new();
            for row in rows {
                let (id, message, at) = row.map_err(op.sql())?;
                entries.push(inbox::decode(id, &message, at).map_err(|e| op.error(StoreErrorKind::Corrupt, e))?);
            }
            Ok(entries)
        })
        .await
    }

    async fn pending_input(&self, thread_id: &str, input_id: &str) -> Result<Option<InboxEntry>, StoreError> {
        self.run_op(Op::message("pending_input", thread_id, input_id), |connection, op| {
            let input_id = op.message_id.unwrap_or_default();
            let row: Option<(String, i64)> = connection
                .prepare_cached("SELECT message, enqueued_at FROM thread_inbox WHERE thread_id = ?1 AND id = ?2")
                .and_then(|mut statement| {
                    statement.query_row([op.thread_id, input_id], |row| Ok((row.get(0)?, row.get(1)?))).optional()
                })
                .map_err(op.sql())?;
            row.map(|(message, at)| {
                inbox::decode(input_id.to_owned(), &message, at).map_err(|e| op.error(StoreErrorKind::Corrupt, e))
            })
            .transpose()
        })
        .await
    }

    /// One transaction for all: the input leaves the inbox exactly when its message is in,
    /// and with [`TakeStatus::Running`] the thread's status becomes `running` in it too (one
    /// commit, so one sync of the file).
    async fn take_input(&self, thread_id: &str, take: &InputTake<'_>) -> Result<bool, StoreError> {
        let (message, status) = (take.message.cloned(), take.status);
        let owner = self.owner.clone();
        self.write(Op::message("take_input", thread_id, take.input_id), move |tx, op| {
            let (thread_id, input_id) = (op.thread_id, op.message_id.unwrap_or_default());
            let taken = tx
                .prepare_cached("DELETE FROM thread_inbox WHERE thread_id = ?1 AND id = ?2")
                .and_then(|mut statement| statement.execute([thread_id, input_id]))
                .map_err(op.sql())?;
            if taken == 0 {
                return Ok(false);
            }
            if let Some(message) = &message {
                insert_row(&Op::message(op.name, thread_id, &message.id), tx, message)?;
            }
            if status == TakeStatus::Running {
                let (status, reason) = rows::status_columns(&ThreadStatus::Running);
                tx.prepare_cached("UPDATE threads SET status = ?2, status_reason = ?3 WHERE id = ?1")
                    .and_then(|mut statement| statement.execute(params![thread_id, status, reason]))
                    .map_err(op.sql())?;
                if let Some(owner) = &owner {
                    owner_row(op, tx, owner, thread_id, true)?;
                }
            }
            Ok(true)
        })
        .await
    }
}

/// An error of remembered-approval operation `operation`, naming the approval when there is one.
fn remembered_error<'a>(operation: &'static str, id: Option<&'a str>) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |e| {
        let about = id.map(|id| format!(" `{id}`")).unwrap_or_default();
        StoreError::new(sql_kind(&e), format!("{operation}: remembered approval{about}: SQLite: {e}")).with_source(e)
    }
}

#[async_trait::async_trait]
impl RememberedApprovalStore for SqliteStore {
    async fn remember_approval(&self, approval: &RememberedApproval) -> Result<(), StoreError> {
        let row = rows::RememberedColumns::of(approval);
        self.run("remember_approval", move |connection| {
            connection
                .execute(
                    &format!(
                        "INSERT INTO remembered_approvals ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        rows::REMEMBERED_COLUMN_LIST
                    ),
                    params![
                        row.id,
                        row.scope,
                        row.tool,
                        row.matcher_kind,
                        row.matcher,
                        row.user_id,
                        row.thread_id,
                        row.created_at,
                        row.created_by
                    ],
                )
                .map_err(remembered_error("remember_approval", Some(&row.id)))?;
            Ok(())
        })
        .await
    }

    async fn list_remembered_approvals(&self, tool: Option<&str>) -> Result<Vec<RememberedApproval>, StoreError> {
        let tool = tool.map(str::to_owned);
        self.run("list_remembered_approvals", move |connection| {
            let fail = remembered_error("list_remembered_approvals", None);
            let mut statement = connection
                .prepare_cached(&format!(
                    "SELECT {} FROM remembered_approvals WHERE ?1 IS NULL OR tool = ?1 ORDER BY created_at, id",
                    rows::REMEMBERED_COLUMN_LIST
                ))
                .map_err(&fail)?;
            let mut rows = statement.query([&tool]).map_err(&fail)?;
            let mut approvals = Vec::new();
            while let Some(row) = rows.next().map_err(&fail)? {
                let read = |row: &Row<'_>| -> rusqlite::Result<rows::RememberedColumns> {
                    Ok(rows::RememberedColumns {
                        id: row.get(0)?,
                        scope: row.get(1)?,
                        tool: row.get(2)?,
                        matcher_kind: row.get(3)?,
                        matcher: row.get(4)?,
                        user_id: row.get(5)?,
                        thread_id: row.get(6)?,
                        created_at: row.get(7)?,
                        created_by: row.get(8)?,
                    })
                };
                approvals.push(read(row).map_err(&fail)?.into_approval("list_remembered_approvals")?);
            }
            Ok(approvals)
        })
        .await
    }

    async fn revoke_remembered_approval(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.run("revoke_remembered_approval", move |connection| {
            let removed = connection
                .execute("DELETE FROM remembered_approvals WHERE id = ?1", [&id])
                .map_err(remembered_error("revoke_remembered_approval", Some(&id)))?;
            Ok(removed == 1)
        })
        .await
    }
}

#[async_trait::async_trait]
impl ApprovalStore for SqliteStore {
    async fn park_tool_calls(&self, thread_id: &str, calls: &[ParkedToolCall]) -> Result<(), StoreError> {
        let calls = calls.to_vec();
        self.write(Op::thread("park_tool_calls", thread_id), move |tx, op| {
            let thread_id = op.thread_id;
            ensure_thread(op, tx)?;
            for call in &calls {
                let json = ParkedJson::of(op, call)?;
                // A settled call of a reused id gives way to the new one.
                tx.prepare_cached("DELETE FROM parked_tool_calls WHERE thread_id = ?1 AND id = ?2 AND settled = 1")
                    .and_then(|mut statement| statement.execute([thread_id, &call.id]))
                    .map_err(op.sql())?;
                tx.execute(
                    "INSERT INTO parked_tool_calls
                     (thread_id, id, position, tool, arguments, reasons, requested_at, state, decision_reason, result,
                      decided_by, decided_at, admission)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                    params![
                        thread_id,
                        call.id,
                        call.position,
                        call.tool,
                        json.arguments,
                        json.reasons,
                        call.requested_at,
                        call.state.as_str(),
                        call.decision_reason,
                        json.result,
                        call.decided_by,
                        call.decided_at,
                        json.admission,
                    ],
                )
                .map_err(op.sql())?;
            }
            Ok(())
        })
        .await
    }

    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError> {
        self.run_op(Op::thread("parked_tool_calls", thread_id), |connection, op| {
            let mut statement = connection
                .prepare_cached(&format!(
                    "SELECT {PARKED_COLUMN_LIST} FROM parked_tool_calls WHERE thread_id = ?1 AND settled = 0 ORDER BY position"
                ))
                .map_err(op.sql())?;
            let mut rows = statement.query([op.thread_id]).map_err(op.sql())?;
            let mut calls = Vec::new();
            while let Some(row) = rows.next().map_err(op.sql())? {
                calls.push(ParkedColumns::read(op, row)?.into_call(op)?);
            }
            Ok(calls)
        })
        .await
    }

    async fn tool_call(&self, thread_id: &str, call_id: &str) -> Result<Option<ParkedToolCall>, StoreError> {
        self.run_op(Op::message("tool_call", thread_id, call_id), |connection, op| {
            let mut statement = connection
                .prepare_cached(&format!(
                    "SELECT {PARKED_COLUMN_LIST} FROM parked_tool_calls WHERE thread_id = ?1 AND id = ?2"
                ))
                .map_err(op.sql())?;
            let mut rows = statement.query([op.thread_id, op.message_id.unwrap_or_default()]).map_err(op.sql())?;
            match rows.next().map_err(op.sql())? {
                Some(row) => Ok(Some(ParkedColumns::read(op, row)?.into_call(op)?)),
                None => Ok(None),
            }
        })
        .await
    }

    async fn advance_tool_call(&self, thread_id: &str, change: &ToolCallChange) -> Result<bool, StoreError> {
        let change = change.clone();
        self.run_op(Op::thread("advance_tool_call", thread_id), move |connection, op| {
            // One conditional write (A4): of two deciders, the second finds the state moved on.
            let moved = connection
                .execute(
                    "UPDATE parked_tool_calls SET state = ?1, arguments = COALESCE(?2, arguments),
                     decision_reason = COALESCE(?3, decision_reason), result = COALESCE(?4, result),
                     decided_by = COALESCE(?8, decided_by), decided_at = COALESCE(?9, decided_at)
                     WHERE thread_id = ?5 AND id = ?6 AND state = ?7 AND settled = 0",
                    params![
                        change.state.as_str(),
                        change.arguments.as_ref().map(Value::to_string),
                        change.decision_reason,
                        change.result.as_ref().map(Value::to_string),
                        op.thread_id,
                        change.call_id,
                        change.from.as_str(),
                        change.decided_by,
                        change.decided_at,
                    ],
                )
                .map_err(op.sql())?;
            Ok(moved == 1)
        })
        .await
    }

    async fn settle_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError> {
        self.run_op(Op::thread("settle_parked_tool_calls", thread_id), |connection, op| {
            connection
                .execute(
                    "UPDATE parked_tool_calls SET settled = 1 WHERE thread_id = ?1 AND settled = 0",
                    [op.thread_id],
                )
                .map_err(op.sql())?;
            Ok(())
        })
        .await
    }
}
