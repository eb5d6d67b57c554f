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

use super::SqliteStore;
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
    fn wake(&self) {
        self.changed.send_modify(|version| *version = version.wrapping_add(1));
    }

    /// Starts the watcher of `connection`, once; it ends with the store.
    fn watch(self: &Arc<Self>, connection: Weak<Mutex<Connection>>) {
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

impl SqliteStore {
    /// Appends `events` to the thread's events, in order, in one transaction.
    pub(super) async fn append_events(
        &self,
        thread_id: &str,
        events: &[crate::events::ThreadEvent],
    ) -> Result<(), StoreError> {
        let Some(hub) = self.events.clone() else { return Ok(()) };
        let op = Op::thread("publish_event", thread_id);
        let encoded = events
            .iter()
            .map(|event| serde_json::to_string(event).map_err(|e| op.error(StoreErrorKind::Other, e)))
            .collect::<Result<Vec<_>, _>>()?;
        let thread_id = thread_id.to_owned();
        self.run("publish_event", move |connection| {
            let op = Op::thread("publish_event", &thread_id);
            let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(op.sql())?;
            let last: i64 = tx
                .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM thread_events WHERE thread_id = ?1")
                .and_then(|mut statement| statement.query_row([&thread_id], |row| row.get(0)))
                .map_err(op.sql())?;
            for (seq, event) in (last + 1..).zip(&encoded) {
                tx.prepare_cached("INSERT INTO thread_events (thread_id, seq, event) VALUES (?1, ?2, ?3)")
                    .and_then(|mut statement| statement.execute(params![thread_id, seq, event]))
                    .map_err(op.sql())?;
            }
            tx.commit().map_err(op.sql())
        })
        .await?;
        hub.wake();
        Ok(())
    }

    /// The thread's events after `after`, in `seq` order.
    pub(super) async fn events_after(&self, thread_id: &str, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let thread_id = thread_id.to_owned();
        self.run("subscribe_events", move |connection| {
            let op = Op::thread("subscribe_events", &thread_id);
            let mut statement = connection
                .prepare_cached("SELECT seq, event FROM thread_events WHERE thread_id = ?1 AND seq > ?2 ORDER BY seq")
                .map_err(op.sql())?;
            let after = i64::try_from(after).unwrap_or(i64::MAX);
            let rows = statement
                .query_map(params![thread_id, after], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
                .map_err(op.sql())?;
            let mut events = Vec::new();
            for row in rows {
                let (seq, event) = row.map_err(op.sql())?;
                let event = crate::store::rows::decode(&op, format_args!("event {seq}"), &event)?;
                events.push(StoredEvent::new(thread_id.clone(), u64::try_from(seq).unwrap_or(0), event));
            }
            Ok(events)
        })
        .await
    }

    /// The `seq` of the thread's last event, 0 before the first.
    pub(super) async fn last_event_seq(&self, thread_id: &str) -> Result<u64, StoreError> {
        let thread_id = thread_id.to_owned();
        self.run("latest_event_seq", move |connection| {
            let op = Op::thread("latest_event_seq", &thread_id);
            let seq: Option<i64> = connection
                .prepare_cached("SELECT MAX(seq) FROM thread_events WHERE thread_id = ?1")
                .and_then(|mut statement| statement.query_row([&thread_id], |row| row.get(0)).optional())
                .map_err(op.sql())?
                .flatten();
            Ok(seq.and_then(|seq| u64::try_from(seq).ok()).unwrap_or(0))
        })
        .await
    }

    /// Follows the thread's events from the first one appended after this call.
    pub(super) async fn follow_events(&self, thread_id: &str) -> Result<Option<EventSubscription>, StoreError> {
        let Some(hub) = self.events.clone() else { return Ok(None) };
        let mut changed = hub.changed.subscribe();
        hub.watch(Arc::downgrade(&self.connection));
        let mut last = self.last_event_seq(thread_id).await?;
        let (events, receiver) = mpsc::channel(FOLLOWER_BUFFER);
        let (store, thread_id) = (self.clone(), thread_id.to_owned());
        let task = tokio::spawn(async move {
            loop {
                match store.events_after(&thread_id, last).await {
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
        Ok(Some(EventSubscription::new(receiver, task)))
    }
}
