//! User changes between processes (value changes, threads created for a user): the user
//! scope's half of scale-out.
//!
//! [`PostgresStore::publish_user`] appends a change to `user_events` and, in the same
//! transaction, sends `NOTIFY` on the schema's user channel with the row's `seq` as payload.
//! Publishers take a transaction-scoped advisory lock first, so `seq` order is commit order and a
//! reader that reads on from the last `seq` it delivered never skips a change. User value
//! changes are rare next to thread events, so one lock for all of them costs nothing that
//! matters.
//!
//! A subscription ([`PostgresStore::subscribe_users`]) starts after the newest change at the
//! time it listens, and reads the table above its last `seq` on every notification, on the
//! store's event poll interval, and after the listening connection reconnected: exactly once and
//! in order for as long as it lives, a lost connection included. It listens through the store's
//! one listening connection, the hub that thread event subscriptions share (see `events`), so a
//! process holds one `LISTEN` connection for threads and users together.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use super::connection::PostgresStore;
use super::driver::describe_pg;
use super::hub::{Follow, LOST};
use crate::store::rows::describe_json_error;
use crate::store::{StoreError, UserChange};

/// How many changes one read fetches.
const READ_BATCH: i64 = 500;
/// How many delivered changes a subscription buffers before it stops reading.
const SUBSCRIPTION_BUFFER: usize = 256;
/// How long a subscription waits before it tries again after a failed read or listen.
const RECONNECT_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

impl PostgresStore {
    /// Publishes a user value change to every process on the store: a row of `user_events`
    /// and a `NOTIFY`, sent only if the row commits.
    pub async fn publish_user(&self, change: &UserChange) -> Result<(), StoreError> {
        let fail = |detail: String| {
            let what = change.key().map_or_else(|| "a new thread".to_owned(), |key| format!("key `{key}`"));
            StoreError::other(format!("publish_user_change: user `{}`, {what}: {detail}", change.user_id))
        };
        let pg = |e: tokio_postgres::Error| fail(describe_pg(&e));
        let json = serde_json::to_string(change).map_err(|e| fail(describe_json_error(&e)))?;
        let mut client = self.client("publish_user_change").await?;
        let tx = client.transaction().await.map_err(pg)?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&self.inner.user_channel]).await.map_err(pg)?;
        let statement = tx
            .prepare_cached("INSERT INTO user_events (user_id, change) VALUES ($1, $2::text::json) RETURNING seq")
            .await
            .map_err(pg)?;
        let seq: i64 = tx.query_one(&statement, &[&change.user_id, &json]).await.map_err(pg)?.get(0);
        tx.execute("SELECT pg_notify($1, $2)", &[&self.inner.user_channel, &seq.to_string()]).await.map_err(pg)?;
        tx.commit().await.map_err(pg)
    }

    /// Every user value change published after this call returns, by any process on the
    /// store, exactly once and in the order they were published. The subscription follows the
    /// store's one listening connection (the hub that thread event subscriptions share) and reads
    /// on a pooled connection; when the hub loses its connection it reconnects by itself (logging
    /// why) and the subscription reads on from the last change it delivered, so a lost connection
    /// loses nothing.
    pub async fn subscribe_users(&self) -> Result<mpsc::Receiver<UserChange>, StoreError> {
        let fail = |detail: String| StoreError::connection(format!("subscribe to user value changes: {detail}"));
        let wake = self.listen(Follow::Users).await.map_err(fail)?;
        // Listening already, so a change committed after this read is notified.
        let client = self.client("subscribe to user value changes").await?;
        let last: i64 = client
            .query_one("SELECT COALESCE(MAX(seq), 0) FROM user_events", &[])
            .await
            .map_err(|e| fail(describe_pg(&e)))?
            .get(0);
        drop(client);
        let (sender, receiver) = mpsc::channel(SUBSCRIPTION_BUFFER);
        tokio::spawn(run_user_subscription(self.clone(), wake, last, sender));
        Ok(receiver)
    }
}

/// The changes above `after`, oldest first, read on a pooled connection.
async fn read_after(store: &PostgresStore, after: i64) -> Result<Vec<(i64, UserChange)>, String> {
    let client = store.client("read user changes").await.map_err(|error| error.to_string())?;
    let rows = client
        .query("SELECT seq, change::text FROM user_events WHERE seq > $1 ORDER BY seq LIMIT $2", &[&after, &READ_BATCH])
        .await
        .map_err(|e| describe_pg(&e))?;
    rows.iter()
        .map(|row| {
            let seq: i64 = row.get(0);
            let json: String = row.get(1);
            let change = parse_change(&json)
                .map_err(|e| format!("user change {seq}: the stored row holds {}", describe_json_error(&e)))?;
            Ok((seq, change))
        })
        .collect()
}

/// A stored change. A row written before changes had a `type` is a value change, the only kind
/// there was then.
fn parse_change(json: &str) -> Result<UserChange, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(json)?;
    if let serde_json::Value::Object(fields) = &mut value
        && !fields.contains_key("type")
    {
        fields.insert("type".to_owned(), "value_changed".into());
    }
    serde_json::from_value(value)
}

/// How a read of the changes above `last` went.
enum Delivery {
    Done,
    Failed,
    /// The receiver went away.
    Gone,
}

/// Reads and delivers the changes above `last`, moving `last` with each one delivered.
async fn deliver_after(store: &PostgresStore, last: &mut i64, sender: &mpsc::Sender<UserChange>) -> Delivery {
    loop {
        match read_after(store, *last).await {
            Ok(changes) => {
                let full = changes.len() as i64 == READ_BATCH;
                for (seq, change) in changes {
                    *last = seq;
                    if sender.send(change).await.is_err() {
                        return Delivery::Gone;
                    }
                }
                if !full {
                    return Delivery::Done;
                }
            }
            Err(detail) => {
                tracing::warn!("user value changes from other processes: {detail}");
                return Delivery::Failed;
            }
        }
    }
}

/// Delivers changes above `last` until the receiver goes away: on every notification of the
/// user channel above `last`, after the hub reconnected, and every poll interval in case a
/// notification was lost.
async fn run_user_subscription(
    store: PostgresStore,
    mut wake: broadcast::Receiver<Arc<str>>,
    mut last: i64,
    sender: mpsc::Sender<UserChange>,
) {
    // Read once at the start: changes published before the hub woke anyone.
    let mut read = true;
    loop {
        let mut failed = false;
        if read {
            match deliver_after(&store, &mut last, &sender).await {
                Delivery::Done => {}
                Delivery::Failed => failed = true,
                Delivery::Gone => return,
            }
        }
        // After a failure, try again soon rather than at the next poll.
        let wait = if failed { RECONNECT_DELAY } else { store.inner.event_poll_interval };
        tokio::select! {
            payload = wake.recv() => read = match payload {
                Ok(payload) if &*payload == LOST => {
                    tracing::warn!(
                        "user value changes from other processes: lost the connection to {}; reconnecting",
                        store.inner.target
                    );
                    // The hub says `WAKE_ALL` once it listens again; the poll reads meanwhile.
                    false
                }
                // A payload is the change's `seq`; anything else may be news.
                Ok(payload) => payload.parse::<i64>().map_or(true, |seq| seq > last),
                Err(broadcast::error::RecvError::Lagged(_)) => true,
                Err(broadcast::error::RecvError::Closed) => {
                    // The hub stopped (it lost its store's last other user): listen again.
                    match store.listen(Follow::Users).await {
                        Ok(receiver) => wake = receiver,
                        Err(detail) => {
                            tracing::warn!("user value changes from other processes: {detail}; retrying");
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

#[cfg(test)]
mod tests {
    use super::parse_change;
    use crate::store::UserChangeKind;

    #[test]
    fn a_row_from_before_change_kinds_reads_as_a_value_change() {
        let old = r#"{"origin":"runtime_a","user_id":"alice","key":"theme","old":null,"new":"dark"}"#;
        let change = parse_change(old).unwrap();
        assert_eq!(change.user_id, "alice");
        assert_eq!(
            change.kind,
            UserChangeKind::ValueChanged { key: "theme".into(), old: None, new: Some(serde_json::json!("dark")) }
        );
        let created = r#"{"origin":"b","user_id":"alice","type":"thread_created","thread_id":"t1","agent":"a"}"#;
        assert_eq!(
            parse_change(created).unwrap().kind,
            UserChangeKind::ThreadCreated { thread_id: "t1".into(), agent: "a".into() }
        );
    }
}
