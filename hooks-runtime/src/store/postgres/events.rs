//! Thread events across processes: an events table read by `seq`, and `NOTIFY` as the wake-up.
//!
//! [`PostgresStore::publish`] appends an event to `thread_events` with the thread's next `seq`
//! (1, 2, 3, ... per thread, taken under the thread's writer lock, so `seq` order is commit
//! order and a reader never sees a gap) and, in the same transaction, sends `NOTIFY` on the
//! schema's channel with the payload `<seq>:<thread id>`: small, far below PostgreSQL's 8000-byte
//! limit, and sent only if the event commits.
//!
//! A store holds one connection that `LISTEN`s for all its subscriptions (the hub, opened with
//! the first subscription and closed after the last): however many threads a process follows,
//! it listens on one connection, which also carries the user channel's notifications to the
//! store's user change subscriptions (`user_events`). A subscription ([`PostgresStore::subscribe`]) reads the events
//! above the last `seq` it delivered, on a pooled connection, whenever a notification names its
//! thread, when the hub reconnected, and at the store's event poll interval in case a
//! notification was lost. So notifications are only hints; the table is the truth.
//!
//! Delivery guarantee: a subscription delivers every event of its thread with a `seq` above the
//! one it started after, each exactly once and in `seq` order, also across a lost connection
//! (it reconnects and reads on from its last `seq`, reporting the interruption as an `Err`
//! item). A client that reconnects subscribes again with the last `seq` it processed, which
//! makes delivery to that client at least once: it de-duplicates by `(thread id, seq)`.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, NoTls};

use super::connection::{Inner, PostgresStore};
use super::driver::{describe_pg, pg_kind};
use super::hub::{Follow, HUB_BUFFER, HubSenders, LOST, WAKE_ALL};
use crate::events::ThreadEvent;
use crate::store::rows::Op;
use crate::store::{EventSubscription, StoreError, StoreErrorKind, StoredEvent};

/// How long a subscription waits before connecting again after losing its connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// How many events one read fetches.
const READ_BATCH: i64 = 500;
/// The longest `NOTIFY` payload PostgreSQL takes is 7999 bytes; a payload this long or longer
/// carries no thread id, and every subscription reads on.
const MAX_PAYLOAD: usize = 7900;
/// How many delivered events a subscription buffers before it stops reading.
const SUBSCRIPTION_BUFFER: usize = 256;
/// How long [`PostgresStore::publish`] tries again after losing its connection before it gives
/// the event up (and says so).
const PUBLISH_RETRY_FOR: Duration = Duration::from_secs(30);

/// How one try to publish failed.
enum Attempt {
    /// The server refused the event; trying again would not help.
    Refused(StoreError),
    /// The connection was lost; `committing` names the transaction and the event's `seq` when
    /// it was lost during the commit, which may have succeeded.
    Lost { error: StoreError, committing: Option<(String, u64)> },
}

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
        let event = serde_json::to_value(event)
            .map_err(|e| op.error(StoreErrorKind::Other, format_args!("encode the event: {e}")))?;
        let json = event.to_string();
        let deadline = Instant::now() + PUBLISH_RETRY_FOR;
        let mut backoff = Duration::from_millis(20);
        loop {
            let error = match self.publish_once(&op, &json).await {
                Ok(seq) => return Ok(StoredEvent { thread_id: thread_id.to_owned(), seq, event }),
                Err(Attempt::Refused(error)) => return Err(error),
                Err(Attempt::Lost { error, committing: Some((xid, seq)) }) => {
                    // The connection went while the commit was on its way: ask the server how
                    // that transaction ended, and store the event again only if it did not commit.
                    match self.transaction_status(&xid).await {
                        Ok(Some(status)) if status == "committed" => {
                            return Ok(StoredEvent { thread_id: thread_id.to_owned(), seq, event });
                        }
                        Ok(Some(status)) if status == "in progress" => {
                            tokio::time::sleep(backoff).await;
                            continue;
                        }
                        _ => error,
                    }
                }
                Err(Attempt::Lost { error, committing: None }) => error,
            };
            if Instant::now() + backoff > deadline {
                return Err(error);
            }
            tracing::warn!(target: "hooks_runtime::store", thread = %thread_id, "publishing a thread event: {error}; trying again");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(1));
        }
    }

    /// One try at [`publish`](Self::publish): the `seq` the event got, or how the try failed.
    async fn publish_once(&self, op: &Op<'_>, json: &str) -> Result<u64, Attempt> {
        let thread_id = op.thread_id;
        let mut client = self.client(op.name).await.map_err(|error| Attempt::Lost { error, committing: None })?;
        let tx = match client.transaction().await {
            Ok(tx) => tx,
            Err(e) => return Err(Attempt::Lost { error: op.pg()(e), committing: None }),
        };
        let staged: Result<(i64, String), StoreError> = async {
            self.check_fence(op, &tx).await?;
            op.ensure_thread(&tx, true).await?;
            let statement = tx
                .prepare_cached(
                    "INSERT INTO thread_events (thread_id, seq, event)
                     VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM thread_events WHERE thread_id = $1), $2::text::json)
                     RETURNING seq, pg_current_xact_id()::text",
                )
                .await
                .map_err(op.pg())?;
            let row = tx.query_one(&statement, &[&thread_id, &json]).await.map_err(op.pg())?;
            let (seq, xid): (i64, String) = (row.try_get(0).map_err(op.pg())?, row.try_get(1).map_err(op.pg())?);
            let mut payload = format!("{seq}:{thread_id}");
            if payload.len() >= MAX_PAYLOAD {
                payload = format!("{seq}:");
            }
            tx.execute("SELECT pg_notify($1, $2)", &[&self.inner.channel, &payload]).await.map_err(op.pg())?;
            Ok((seq, xid))
        }
        .await;
        let (error, committing) = match staged {
            Ok((seq, xid)) => match tx.commit().await {
                Ok(()) => return Ok(seq.unsigned_abs()),
                Err(e) => (op.pg()(e), Some((xid, seq.unsigned_abs()))),
            },
            Err(error) => {
                drop(tx);
                (error, None)
            }
        };
        // A connection that no longer answers is a lost try (a terminated backend may not look
        // closed yet); on a working one the server refused the event (no such thread, a lost
        // lease), and trying again would not change that.
        let lost = client.is_closed() || client.batch_execute("").await.is_err();
        if lost { Err(Attempt::Lost { error, committing }) } else { Err(Attempt::Refused(error)) }
    }

    /// How transaction `xid` ended, as `pg_xact_status` says: `committed`, `aborted`,
    /// `in progress`, or `None` when the server no longer knows.
    async fn transaction_status(&self, xid: &str) -> Result<Option<String>, StoreError> {
        let client = self.client("publish: check the commit").await?;
        let row = client.query_one("SELECT pg_xact_status($1::text::xid8)", &[&xid]).await.map_err(|e| {
            StoreError::new(pg_kind(&e), format!("publish: check the commit: {}", describe_pg(&e))).with_source(e)
        })?;
        Ok(row.get(0))
    }

    /// The thread's events with a `seq` above `after`, oldest first (at most 500 per call).
    pub async fn events_after(&self, thread_id: &str, after: u64) -> Result<Vec<StoredEvent>, StoreError> {
        let client = self.client("events_after").await?;
        read_after(&client, thread_id, after).await
    }

    /// Delivers the thread's events with a `seq` above `after` (0: all of them), then every new
    /// one as it is published, from any process.
    ///
    /// The store's one listening connection (shared by all its subscriptions) `LISTEN`s on the
    /// schema's channel; a `NOTIFY` (payload `<seq>:<thread id>`, sent when a [`publish`](Self::publish) commits)
    /// makes the subscription read the events table from its last `seq` on a pooled
    /// connection, and so does a timer (every 5 s by default:
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
        // Listening before the first read, so that nothing published in between is missed; a
        // bad server is this call's error.
        let wake = self.listen(Follow::Threads).await.map_err(|detail| op.error(StoreErrorKind::Connection, detail))?;
        let (sender, receiver) = mpsc::channel(SUBSCRIPTION_BUFFER);
        let task = tokio::spawn(run_subscription(self.clone(), thread_id.to_owned(), after, wake, sender));
        Ok(EventSubscription::new(receiver, task))
    }

    /// A receiver of the hub's notifications for `follow`, starting the hub if it is not
    /// running: once this returns, the hub listens, so a notification sent afterwards arrives
    /// (or, after a reconnection, [`WAKE_ALL`] does).
    pub(super) async fn listen(&self, follow: Follow) -> Result<broadcast::Receiver<Arc<str>>, String> {
        let mut slot = self.inner.hub.senders.lock().await;
        let senders = match slot.as_ref() {
            Some(senders) => senders.clone(),
            None => {
                let listener = Listener::connect(self).await?;
                let senders =
                    HubSenders { threads: broadcast::channel(HUB_BUFFER).0, users: broadcast::channel(HUB_BUFFER).0 };
                *slot = Some(senders.clone());
                tokio::spawn(run_hub(Arc::downgrade(&self.inner), listener, senders.clone()));
                senders
            }
        };
        Ok(match follow {
            Follow::Threads => senders.threads.subscribe(),
            Follow::Users => senders.users.subscribe(),
        })
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

/// The hub's `LISTEN`ing connection: the client, and the channel and payload of each
/// notification.
struct Listener {
    client: Client,
    notifications: mpsc::UnboundedReceiver<(String, String)>,
    driver: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl Listener {
    /// Connects and `LISTEN`s on the store's thread events channel and its user channel;
    /// errors are sentences naming the server.
    async fn connect(store: &PostgresStore) -> Result<Self, String> {
        let target = &store.inner.target;
        let channel = &store.inner.channel;
        // Named after the events channel, so an operator can tell the listener apart in
        // `pg_stat_activity`.
        let mut config = store.inner.config.clone();
        config.application_name(channel);
        let (client, mut connection) =
            config.connect(NoTls).await.map_err(|e| format!("connect to {target}: {}", describe_pg(&e)))?;
        let (sender, notifications) = mpsc::unbounded_channel();
        let driver = tokio::spawn(async move {
            // Ends when the connection does; the closed channel tells the subscription.
            while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                if let AsyncMessage::Notification(note) = message
                    && sender.send((note.channel().to_owned(), note.payload().to_owned())).is_err()
                {
                    return;
                }
            }
        });
        let listener = Listener { client, notifications, driver };
        // The channel names are derived from a checked schema name, so they need no quoting.
        let user_channel = &store.inner.user_channel;
        listener
            .client
            .batch_execute(&format!("LISTEN {channel}; LISTEN {user_channel}"))
            .await
            .map_err(|e| format!("listen on {target} for thread events and user changes: {}", describe_pg(&e)))?;
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
            let event = serde_json::from_str(&json).map_err(|e| {
                op.error(
                    StoreErrorKind::Corrupt,
                    format_args!("event {seq}: {}", crate::store::rows::describe_json_error(&e)),
                )
            })?;
            Ok(StoredEvent { thread_id: thread_id.to_owned(), seq: seq.unsigned_abs(), event })
        })
        .collect()
}

/// Passes the hub connection's notifications to the subscriptions until none is left (looked at
/// every poll interval) or the store is gone; reconnects when the connection is lost, then
/// wakes every subscription.
async fn run_hub(store: Weak<Inner>, mut listener: Listener, senders: HubSenders) {
    loop {
        let Some(inner) = store.upgrade() else { return };
        let poll = inner.event_poll_interval;
        let user_channel = inner.user_channel.clone();
        drop(inner);
        tokio::select! {
            notification = listener.notifications.recv() => {
                if let Some((channel, payload)) = notification {
                    let to = if channel == user_channel { &senders.users } else { &senders.threads };
                    let _ = to.send(payload.into());
                    continue;
                }
            }
            () = tokio::time::sleep(poll) => {
                let Some(inner) = store.upgrade() else { return };
                let mut slot = inner.hub.senders.lock().await;
                // Under the lock no subscription can start, so none is left out.
                if !senders.listened_to() {
                    *slot = None;
                    return;
                }
                if !listener.client.is_closed() {
                    continue;
                }
            }
        }
        // The connection is lost: connect again until it works or nobody listens any more.
        senders.send_to_all(LOST);
        loop {
            let Some(inner) = store.upgrade() else { return };
            if !senders.listened_to() {
                let mut slot = inner.hub.senders.lock().await;
                if !senders.listened_to() {
                    *slot = None;
                    return;
                }
            }
            let store = PostgresStore { inner };
            match Listener::connect(&store).await {
                Ok(connected) => {
                    listener = connected;
                    senders.send_to_all(WAKE_ALL);
                    break;
                }
                Err(detail) => {
                    tracing::warn!(target: "hooks_runtime::store", "listening for thread events: {detail}; retrying");
                    drop(store);
                    tokio::time::sleep(RECONNECT_DELAY).await;
                }
            }
        }
    }
}

/// Delivers events above `last` until the subscriber goes away; a failed read is reported and
/// tried again, from the same `seq`.
async fn run_subscription(
    store: PostgresStore,
    thread_id: String,
    mut last: u64,
    mut wake: broadcast::Receiver<Arc<str>>,
    sender: mpsc::Sender<Result<StoredEvent, StoreError>>,
) {
    // Read once at the start: events published before the hub woke anyone.
    let mut read = true;
    loop {
        let mut failed = false;
        if read {
            match deliver_after(&store, &thread_id, &mut last, &sender).await {
                Delivery::Done => {}
                Delivery::Failed(error) => {
                    failed = true;
                    if sender.send(Err(error)).await.is_err() {
                        return;
                    }
                }
                Delivery::Gone => return,
            }
        }
        // After a failure, try again soon rather than at the next poll.
        let wait = if failed { RECONNECT_DELAY } else { store.inner.event_poll_interval };
        tokio::select! {
            payload = wake.recv() => read = match payload {
                Ok(payload) if &*payload == LOST => {
                    let lost = Op::thread("subscribe", &thread_id)
                        .error(StoreErrorKind::Connection, format_args!("lost the connection to {}; reconnecting", store.inner.target));
                    if sender.send(Err(lost)).await.is_err() {
                        return;
                    }
                    true
                }
                Ok(payload) => concerns(&payload, &thread_id, last),
                Err(broadcast::error::RecvError::Lagged(_)) => true,
                Err(broadcast::error::RecvError::Closed) => {
                    // The hub stopped (it lost its store's last other user): listen again.
                    match store.listen(Follow::Threads).await {
                        Ok(receiver) => wake = receiver,
                        Err(detail) => {
                            if sender.send(Err(Op::thread("subscribe", &thread_id).error(StoreErrorKind::Connection, detail))).await.is_err() {
                                return;
                            }
                            tokio::time::sleep(RECONNECT_DELAY).await;
                        }
                    }
                    true
                }
            },
            () = tokio::time::sleep(wait) => read = true,
            () = sender.closed() => return,
        }
    }
}

/// How a read of the events above `last` went.
enum Delivery {
    Done,
    Failed(StoreError),
    /// The subscriber went away.
    Gone,
}

/// Reads and delivers the events above `last` on a pooled connection, moving `last` with
/// each one delivered.
async fn deliver_after(
    store: &PostgresStore,
    thread_id: &str,
    last: &mut u64,
    sender: &mpsc::Sender<Result<StoredEvent, StoreError>>,
) -> Delivery {
    loop {
        let client = match store.client("read events").await {
            Ok(client) => client,
            Err(error) => return Delivery::Failed(error),
        };
        let events = match read_after(&client, thread_id, *last).await {
            Ok(events) => events,
            Err(error) => return Delivery::Failed(error),
        };
        drop(client);
        let full = events.len() as i64 == READ_BATCH;
        for event in events {
            *last = event.seq;
            if sender.send(Ok(event)).await.is_err() {
                return Delivery::Gone;
            }
        }
        if !full {
            return Delivery::Done;
        }
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
