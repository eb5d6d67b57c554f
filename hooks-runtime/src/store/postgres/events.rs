//! Thread events across processes: an events table read by `seq`, and `NOTIFY` as the wake-up.
//!
//! [`PostgresStore::publish`] appends an event to `thread_events` with the thread's next `seq`
//! (1, 2, 3, ... per thread, taken under the thread's writer lock, so `seq` order is commit
//! order and a reader never sees a gap) and, in the same transaction, sends `NOTIFY` on the
//! schema's channel with the payload `<seq>:<thread id>`: small, far below PostgreSQL's 8000-byte
//! limit, and sent only if the event commits.
//!
//! A subscription ([`PostgresStore::subscribe`]) holds one connection of its own that `LISTEN`s,
//! and reads the events above the last `seq` it delivered whenever a notification names its
//! thread, and at the store's event poll interval in case one was lost. So notifications are only hints;
//! the table is the truth.
//!
//! Delivery guarantee: a subscription delivers every event of its thread with a `seq` above the
//! one it started after, each exactly once and in `seq` order, also across a lost connection
//! (it reconnects and reads on from its last `seq`, reporting the interruption as an `Err`
//! item). A client that reconnects subscribes again with the last `seq` it processed, which
//! makes delivery to that client at least once: it de-duplicates by `(thread id, seq)`.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, NoTls};

use super::{Op, PostgresStore, describe_pg};
use crate::store::{EventSubscription, StoreError, StoredEvent};
use crate::thread::ThreadEvent;

/// How long a subscription waits before connecting again after losing its connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// How many events one read fetches.
const READ_BATCH: i64 = 500;
/// The longest `NOTIFY` payload PostgreSQL takes is 7999 bytes; a payload this long or longer
/// carries no thread id, and every subscription reads on.
const MAX_PAYLOAD: usize = 7900;
/// How many delivered events a subscription buffers before it stops reading.
const SUBSCRIPTION_BUFFER: usize = 256;

impl PostgresStore {
    /// Stores `event` as the thread's next event and notifies every subscriber, in any process,
    /// when the transaction commits. Fails for an unknown thread.
    ///
    /// ```no_run
    /// use hooks_runtime::ThreadEvent;
    /// use hooks_runtime::store::{PostgresStore, ThreadStatus};
    ///
    /// # async fn run(store: PostgresStore) -> Result<(), hooks_runtime::store::StoreError> {
    /// let stored = store.publish("t1", &ThreadEvent::Status { status: ThreadStatus::Running }).await?;
    /// println!("event {} of thread t1", stored.seq);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn publish(&self, thread_id: &str, event: &ThreadEvent) -> Result<StoredEvent, StoreError> {
        let op = Op::thread("publish", thread_id);
        let event = serde_json::to_value(event).map_err(|e| op.error(format_args!("encode the event: {e}")))?;
        let json = event.to_string();
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        op.ensure_thread(&tx, true).await?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO thread_events (thread_id, seq, event)
                 VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM thread_events WHERE thread_id = $1), $2::text::json)
                 RETURNING seq",
            )
            .await
            .map_err(op.pg())?;
        let seq: i64 = tx.query_one(&statement, &[&thread_id, &json]).await.map_err(op.pg())?.get(0);
        let mut payload = format!("{seq}:{thread_id}");
        if payload.len() >= MAX_PAYLOAD {
            payload = format!("{seq}:");
        }
        tx.execute("SELECT pg_notify($1, $2)", &[&self.inner.channel, &payload]).await.map_err(op.pg())?;
        tx.commit().await.map_err(op.pg())?;
        Ok(StoredEvent { thread_id: thread_id.to_owned(), seq: seq.unsigned_abs(), event })
    }

    /// The thread's events with a `seq` above `after`, oldest first (at most 500 per call).
    pub async fn events_after(&self, thread_id: &str, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let client = self.client("events_after").await?;
        read_after(&client, thread_id, after).await
    }

    /// Delivers the thread's events with a `seq` above `after` (0: all of them), then every new
    /// one as it is published, from any process.
    ///
    /// The subscription holds a connection of its own that `LISTEN`s on the schema's channel;
    /// a `NOTIFY` (payload `<seq>:<thread id>`, sent when a [`publish`](Self::publish) commits)
    /// makes it read the events table from its last `seq`, and so does a timer (every 5 s by default:
    /// [`PostgresOptions::event_poll_interval`](super::PostgresOptions::event_poll_interval)), in
    /// case a notification was lost. Events usually arrive within milliseconds of the commit.
    ///
    /// Delivery guarantee: exactly once and in `seq` order within one subscription, including
    /// across a lost connection (it reports an `Err` item, reconnects and reads on from its last
    /// `seq`). Across subscriptions it is at least once: a client that comes back subscribes
    /// with the last `seq` it processed and de-duplicates by `(thread id, seq)`.
    ///
    /// ```no_run
    /// use hooks_runtime::store::PostgresStore;
    ///
    /// # async fn run(store: PostgresStore) -> Result<(), hooks_runtime::store::StoreError> {
    /// let mut events = store.subscribe("t1", 0).await?;
    /// while let Some(event) = events.next().await {
    ///     let event = event?;
    ///     println!("{} {}", event.seq, event.event);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn subscribe(&self, thread_id: &str, after: u64) -> Result<EventSubscription, StoreError> {
        let op = Op::thread("subscribe", thread_id);
        // The first connection is made here, so that a bad server is this call's error.
        let listener = Listener::connect(self, &self.inner.channel, &format!("thread `{thread_id}`"))
            .await
            .map_err(|detail| op.error(detail))?;
        let (sender, receiver) = mpsc::channel(SUBSCRIPTION_BUFFER);
        let task = tokio::spawn(run_subscription(self.clone(), thread_id.to_owned(), after, listener, sender));
        Ok(EventSubscription::new(receiver, task))
    }

    /// The thread's last event `seq`, 0 before its first event.
    pub(super) async fn last_event_seq(&self, thread_id: &str) -> Result<u64, StoreError> {
        let op = Op::thread("last_event_seq", thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM thread_events WHERE thread_id = $1")
            .await
            .map_err(op.pg())?;
        let seq: i64 = client.query_one(&statement, &[&thread_id]).await.map_err(op.pg())?.get(0);
        Ok(seq.unsigned_abs())
    }
}

/// A `LISTEN`ing connection: the client, and the payloads of its notifications.
pub(super) struct Listener {
    pub(super) client: Client,
    pub(super) notifications: mpsc::UnboundedReceiver<String>,
    driver: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl Listener {
    /// Connects and `LISTEN`s on `channel` for `purpose` (such as "thread `t1`"); errors are
    /// sentences naming the server.
    pub(super) async fn connect(store: &PostgresStore, channel: &str, purpose: &str) -> Result<Self, String> {
        let target = &store.inner.target;
        // Named after the channel, so an operator can tell listeners apart in `pg_stat_activity`.
        let mut config = store.inner.config.clone();
        config.application_name(channel);
        let (client, mut connection) =
            config.connect(NoTls).await.map_err(|e| format!("connect to {target}: {}", describe_pg(&e)))?;
        let (sender, notifications) = mpsc::unbounded_channel();
        let driver = tokio::spawn(async move {
            // Ends when the connection does; the closed channel tells the subscription.
            while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                if let AsyncMessage::Notification(note) = message
                    && sender.send(note.payload().to_owned()).is_err()
                {
                    return;
                }
            }
        });
        let listener = Listener { client, notifications, driver };
        // The channel name is derived from a checked schema name, so it needs no quoting.
        listener
            .client
            .batch_execute(&format!("LISTEN {channel}"))
            .await
            .map_err(|e| format!("listen on {target} for {purpose}: {}", describe_pg(&e)))?;
        Ok(listener)
    }
}

/// Whether a notification's payload is about `thread_id` and may hold an event above `last`.
fn concerns(payload: &str, thread_id: &str, last: u64) -> bool {
    match payload.split_once(':') {
        Some((seq, "")) => seq.parse::<u64>().map_or(true, |seq| seq > last),
        Some((seq, thread)) => thread == thread_id && seq.parse::<u64>().map_or(true, |seq| seq > last),
        None => true,
    }
}

async fn read_after(client: &Client, thread_id: &str, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
    let op = Op::thread("read events", thread_id);
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let rows = client
        .query(
            "SELECT seq, event::text FROM thread_events WHERE thread_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            &[&thread_id, &after, &READ_BATCH],
        )
        .await
        .map_err(op.pg())?;
    rows.iter()
        .map(|row| {
            let seq: i64 = row.try_get(0).map_err(op.pg())?;
            let json: String = row.try_get(1).map_err(op.pg())?;
            let event = serde_json::from_str(&json)
                .map_err(|e| op.error(format_args!("event {seq}: {}", super::describe_json_error(&e))))?;
            Ok(StoredEvent { thread_id: thread_id.to_owned(), seq: seq.unsigned_abs(), event })
        })
        .collect()
}

/// Delivers events above `last` until the subscriber goes away, reconnecting when the
/// connection is lost.
async fn run_subscription(
    store: PostgresStore,
    thread_id: String,
    mut last: u64,
    listener: Listener,
    sender: mpsc::Sender<Result<StoredEvent, StoreError>>,
) {
    let mut listener = Some(listener);
    loop {
        let mut current = match listener.take() {
            Some(current) => current,
            None => match Listener::connect(&store, &store.inner.channel, &format!("thread `{thread_id}`")).await {
                Ok(current) => current,
                Err(detail) => {
                    if sender.send(Err(Op::thread("subscribe", &thread_id).error(detail))).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(RECONNECT_DELAY).await;
                    continue;
                }
            },
        };
        // Read once after LISTEN, so nothing published before it is missed.
        let mut read = true;
        loop {
            if read {
                loop {
                    match read_after(&current.client, &thread_id, last).await {
                        Ok(events) => {
                            let full = events.len() as i64 == READ_BATCH;
                            for event in events {
                                last = event.seq;
                                if sender.send(Ok(event)).await.is_err() {
                                    return;
                                }
                            }
                            if !full {
                                break;
                            }
                        }
                        Err(e) => {
                            if sender.send(Err(e)).await.is_err() {
                                return;
                            }
                            break;
                        }
                    }
                }
            }
            if current.client.is_closed() {
                break;
            }
            tokio::select! {
                payload = current.notifications.recv() => match payload {
                    Some(payload) => read = concerns(&payload, &thread_id, last),
                    None => break,
                },
                () = tokio::time::sleep(store.inner.event_poll_interval) => read = true,
                () = sender.closed() => return,
            }
        }
        let lost = Op::thread("subscribe", &thread_id)
            .error(format_args!("lost the connection to {}; reconnecting", store.inner.target));
        if sender.send(Err(lost)).await.is_err() {
            return;
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::concerns;

    #[test]
    fn a_notification_wakes_only_the_subscriptions_of_its_thread_with_older_events() {
        assert!(concerns("7:t1", "t1", 6));
        assert!(!concerns("7:t1", "t1", 7), "already delivered");
        assert!(!concerns("7:t2", "t1", 0), "another thread");
        assert!(concerns("7:", "t1", 0), "a payload without a thread id wakes everyone");
        assert!(concerns("garbage", "t1", 100));
        assert!(concerns("7:a:b", "a:b", 0), "a thread id may hold colons");
    }
}
