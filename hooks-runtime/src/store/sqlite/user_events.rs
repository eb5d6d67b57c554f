//! User changes between processes on one SQLite file: the user scope's half of following the
//! store. A change is a row of `user_events`; a follower reads on from the last `seq` it
//! delivered whenever the store's [`EventHub`] says the file changed, as thread event followers
//! do, so another process's change arrives within the hub's watch interval.

use std::sync::{Arc, Mutex};

use rusqlite::{Connection, TransactionBehavior, params};
use tokio::sync::mpsc;

use super::events::{EventHub, read_blocking};
use crate::store::rows::describe_json_error;
use crate::store::{StoreError, UserChange};

/// How many delivered changes a follower buffers before it stops reading.
const FOLLOWER_BUFFER: usize = 256;

/// The error of `op` on `change`'s user, naming the key (never the value).
fn failure(op: &str, user_id: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::other(format!("{op}: user `{user_id}`: {detail}"))
}

/// Appends `change` to `user_events`.
pub(super) fn append(connection: &mut Connection, change: &UserChange) -> Result<(), StoreError> {
    let fail = |detail: String| failure("publish_user_change", &change.user_id, detail);
    let json = serde_json::to_string(change).map_err(|e| fail(describe_json_error(&e)))?;
    let sql = |e: rusqlite::Error| fail(format!("SQLite: {e}"));
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
    tx.prepare_cached("INSERT INTO user_events (user_id, change) VALUES (?1, ?2)")
        .and_then(|mut statement| statement.execute(params![change.user_id, json]))
        .map_err(sql)?;
    tx.commit().map_err(sql)
}

/// The `seq` of the newest change, 0 before the first.
fn last_seq(connection: &Connection) -> Result<i64, StoreError> {
    connection
        .query_row("SELECT COALESCE(MAX(seq), 0) FROM user_events", [], |row| row.get(0))
        .map_err(|e| StoreError::other(format!("user_changes: SQLite: {e}")))
}

/// The changes after `after`, in `seq` order; a row that does not decode is an error naming its
/// `seq` and user.
type ReadChange = (i64, Result<UserChange, StoreError>);

fn read_after(connection: &Connection, after: i64) -> Result<Vec<ReadChange>, StoreError> {
    let sql = |e: rusqlite::Error| StoreError::other(format!("user_changes: SQLite: {e}"));
    let mut statement = connection
        .prepare_cached("SELECT seq, user_id, change FROM user_events WHERE seq > ?1 ORDER BY seq")
        .map_err(sql)?;
    let rows = statement
        .query_map([after], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?)))
        .map_err(sql)?;
    let mut changes = Vec::new();
    for row in rows {
        let (seq, user_id, json) = row.map_err(sql)?;
        let change = serde_json::from_str(&json).map_err(|e| {
            StoreError::corrupt(format!(
                "user_changes: user `{user_id}`: stored change {seq} does not decode: {}",
                describe_json_error(&e)
            ))
        });
        changes.push((seq, change));
    }
    Ok(changes)
}

/// Every change published after this call, by any process on the file, in order. A change that
/// does not decode is logged and skipped (it cannot become readable later); a failed read is
/// logged and read again at the next change of the file.
pub(super) async fn follow(
    connection: Arc<Mutex<Connection>>,
    hub: &Arc<EventHub>,
) -> Result<mpsc::Receiver<UserChange>, StoreError> {
    let mut changed = hub.changes();
    hub.watch(Arc::downgrade(&connection));
    let mut last = read_blocking(&connection, last_seq).await?;
    let (sender, receiver) = mpsc::channel(FOLLOWER_BUFFER);
    tokio::spawn(async move {
        loop {
            if changed.changed().await.is_err() {
                return;
            }
            let after = last;
            match read_blocking(&connection, move |connection| read_after(connection, after)).await {
                Ok(changes) => {
                    for (seq, change) in changes {
                        last = seq;
                        match change {
                            Ok(change) => {
                                if sender.send(change).await.is_err() {
                                    return;
                                }
                            }
                            Err(error) => tracing::error!(target: "hooks_runtime::store", "{error}"),
                        }
                    }
                }
                Err(error) => {
                    tracing::error!(target: "hooks_runtime::store", "reading user changes from the SQLite file: {error}");
                }
            }
            if sender.is_closed() {
                return;
            }
        }
    });
    Ok(receiver)
}
