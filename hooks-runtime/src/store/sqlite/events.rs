//! Thread events between processes on one SQLite file (O5): every event a runtime emits is
//! appended to `thread_events` (in batches, off the run's path), and a follower reads on from
//! the last `seq` it delivered whenever the file changed.
//!
//! How a follower learns of a change: `PRAGMA data_version` changes for a connection when
//! another connection (another process) committed to the file. One watcher task per store asks
//! it every [`WATCH_INTERVAL`], and wakes the store's followers when it changed; this store's
//! own appends wake them at once. So another process's event reaches a follower within one
//! interval plus a read, and no follower reads the file while nothing changed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use tokio::sync::{mpsc, watch};

use crate::store::rows::Op;
use crate::store::{EventSubscription, StoreError, StoreErrorKind, StoredEvent};

/// How often the watcher asks whether another process wrote to the file.
pub(super) const WATCH_INTERVAL: Duration = Duration::from_millis(100);

/// How many events a follower may have read and not yet delivered.
const FOLLOWER_BUFFER: usize = 256;

/// The store's followers' wake-up call, and its watcher.
#[derive(Debug)]
pub(super) struct EventHub {
    /// Bumped whenever the file may hold new events.
    changed: watch::Sender<u64>,
    watching: AtomicBool,
}

impl EventHub {
    pub(super) fn new() -> Self {
        EventHub { changed: watch::channel(0).0, watching: AtomicBool::new(false) }
    }

    /// Wakes the followers: the file may hold new events.
    pub(super) fn wake(&self) {
        self.changed.send_modify(|version| *version = version.wrapping_add(1));
    }

    /// A receiver that sees every later [`wake`](Self::wake).
    pub(super) fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Starts the watcher of `connection`, once; it ends with the store.
    pub(super) fn watch(self: &Arc<Self>, connection: Weak<Mutex<Connection>>) {
        if self.watching.swap(true, Ordering::AcqRel) {
            return;
        }
        let hub = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut last = None;
            loop {
                tokio::time::sleep(WATCH_INTERVAL).await;
                let (Some(connection), Some(hub)) = (connection.upgrade(), hub.upgrade()) else { return };
                let version = tokio::task::spawn_blocking(move || {
                    let connection = connection.lock().unwrap_or_else(PoisonError::into_inner);
                    connection.query_row("PRAGMA data_version", [], |row| row.get::<_, i64>(0)).ok()
                })
                .await
                .ok()
                .flatten();
                if version.is_some() && version != last {
                    last = version;
                    hub.wake();
                }
            }
        });
    }
}

/// Appends `events` (as JSON text) to the thread's events, in order, in one transaction.
pub(super) fn append(connection: &mut Connection, thread_id: &str, events: &[String]) -> Result<(), StoreError> {
    let op = Op::thread("publish_event", thread_id);
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(|e| sql(&op, e))?;
    let last: i64 = tx
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM thread_events WHERE thread_id = ?1")
        .and_then(|mut statement| statement.query_row([thread_id], |row| row.get(0)))
        .map_err(|e| sql(&op, e))?;
    for (seq, event) in (last + 1..).zip(events) {
        tx.prepare_cached("INSERT INTO thread_events (thread_id, seq, event) VALUES (?1, ?2, ?3)")
            .and_then(|mut statement| statement.execute(params![thread_id, seq, event]))
            .map_err(|e| sql(&op, e))?;
    }
    tx.commit().map_err(|e| sql(&op, e))
}

/// The thread's events after `after`, in `seq` order.
pub(super) fn read_after(connection: &Connection, thread_id: &str, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
    let op = Op::thread("subscribe_events", thread_id);
    let mut statement = connection
        .prepare_cached("SELECT seq, event FROM thread_events WHERE thread_id = ?1 AND seq > ?2 ORDER BY seq")
        .map_err(|e| sql(&op, e))?;
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let rows = statement
        .query_map(params![thread_id, after], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
        .map_err(|e| sql(&op, e))?;
    let mut events = Vec::new();
    for row in rows {
        let (seq, event) = row.map_err(|e| sql(&op, e))?;
        let event = crate::store::rows::decode(&op, format_args!("event {seq}"), &event)?;
        events.push(StoredEvent::new(thread_id, u64::try_from(seq).unwrap_or(0), event));
    }
    Ok(events)
}

/// The `seq` of the thread's last event, 0 before the first.
pub(super) fn last_seq(connection: &Connection, thread_id: &str) -> Result<u64, StoreError> {
    let op = Op::thread("latest_event_seq", thread_id);
    let seq: Option<i64> = connection
        .prepare_cached("SELECT MAX(seq) FROM thread_events WHERE thread_id = ?1")
        .and_then(|mut statement| statement.query_row([thread_id], |row| row.get(0)).optional())
        .map_err(|e| sql(&op, e))?
        .flatten();
    Ok(seq.and_then(|seq| u64::try_from(seq).ok()).unwrap_or(0))
}

fn sql(op: &Op<'_>, error: rusqlite::Error) -> StoreError {
    op.error(StoreErrorKind::Other, format_args!("SQLite: {error}")).with_source(error)
}

/// Runs `read` on the connection in tokio's blocking pool.
pub(super) async fn read_blocking<T: Send + 'static>(
    connection: &Arc<Mutex<Connection>>,
    read: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    let connection = connection.clone();
    tokio::task::spawn_blocking(move || read(&connection.lock().unwrap_or_else(PoisonError::into_inner)))
        .await
        .map_err(|_| StoreError::other("subscribe_events: the blocking read stopped"))?
}

/// Follows the thread's events after `start`, reading on whenever `hub` says the file changed.
pub(super) fn follow(
    connection: Arc<Mutex<Connection>>,
    hub: &Arc<EventHub>,
    thread_id: String,
    start: u64,
) -> EventSubscription {
    let mut changed = hub.changed.subscribe();
    hub.watch(Arc::downgrade(&connection));
    let (events, receiver) = mpsc::channel(FOLLOWER_BUFFER);
    let task = tokio::spawn(async move {
        let mut last = start;
        loop {
            let id = thread_id.clone();
            match read_blocking(&connection, move |connection| read_after(connection, &id, last)).await {
                Ok(read) => {
                    for event in read {
                        last = event.seq;
                        if events.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                }
                // Reported, then read again at the next change: nothing is skipped.
                Err(error) => {
                    if events.send(Err(error)).await.is_err() {
                        return;
                    }
                }
            }
            if changed.changed().await.is_err() {
                return;
            }
        }
    });
    EventSubscription::new(receiver, task)
}
