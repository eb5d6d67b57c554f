//! The PostgreSQL [`MessageStore`]: one database that many runtime processes share (feature
//! `postgres`).
//!
//! Why `tokio-postgres` and `deadpool-postgres`: the runtime is already on tokio, and
//! `tokio-postgres` is the maintained async driver for it with first-class `LISTEN`/`NOTIFY`
//! (each connection hands out its notifications), which the cross-process events need and which
//! `sqlx` exposes only through a separate listener type. `deadpool-postgres` is the small,
//! maintained pool for it, with a per-connection statement cache. `sqlx` would bring its own
//! runtime abstraction, macros and migration machinery that this store does not use: the schema
//! is a few steps of plain SQL.
//!
//! Every write is one transaction. Writes to a thread first lock its row (`FOR NO KEY UPDATE`), so
//! concurrent writers of one thread, in any process, take turns and each message's place in the
//! thread (`seq`) is the order in which the inserts committed.
//!
//! # Leases: one running owner per thread
//!
//! Every run ([`RunOwnership::hold_run`], taken by `Thread::send` and `run_queued`) holds a
//! lease row on its thread, with an expiry on the database server's clock. Timings, with the
//! defaults of [`PostgresOptions`]:
//!
//! - the lease lasts `run_lease_ttl` (15 s) and its holder renews it every third of that (5 s);
//! - a send to a thread that another process runs waits, polling every 10 ms and backing off to
//!   250 ms, for up to `run_wait` (300 s): a released lease is taken within about 250 ms;
//! - if the holder dies, another process can take the thread `run_lease_ttl` after the last
//!   renewal (10 to 15 s after the death), and marks a thread left `running` as
//!   `failed (owner_lost)` in the same transaction;
//! - every runtime on the store sweeps every `recovery_sweep` (5 s) for threads left `running`,
//!   or with inputs in their inbox, that no live lease holds
//!   ([`MessageStore::unsettled_threads`]), and recovers them: a dead owner's thread is settled
//!   and its inbox run within `run_lease_ttl` plus one sweep, without a new send;
//! - a holder that loses its lease (a renewal finds it taken or expired, no renewal succeeds for
//!   a whole ttl, or a write finds it gone) has its writes to the thread refused from the moment
//!   the lease expired: each write checks the lease in its own transaction (`fence`). The
//!   runtime stops the run before its next model step, and the run ends `failed (lease_lost)`.
//!   A takeover waits for a write that passed the check, so no write of the old holder lands
//!   after it.
//!
//! # Delivery guarantees
//!
//! - Thread events ([`publish`](PostgresStore::publish), [`subscribe`](PostgresStore::subscribe)):
//!   exactly once and in order within a subscription, across lost connections too; a client
//!   that comes back subscribes with the last `seq` it saw and de-duplicates by
//!   `(thread, seq)`, which makes delivery to it at least once. A runtime publishes its events
//!   from a task of its own, and all of a run's events before its lease is released, so the
//!   runs of one thread never interleave in its events. A write that loses its connection is
//!   tried again for up to 30 s, each event stored once: when the connection went during the
//!   commit, `pg_xact_status` (PostgreSQL 13 and later) tells whether it committed. An event the
//!   server refuses, or that cannot be written for 30 s, is logged and given up.
//! - User value changes ([`publish_user`](PostgresStore::publish_user),
//!   [`subscribe_users`](PostgresStore::subscribe_users)): exactly once and in publishing order
//!   to every runtime listening (from its first `attach_client`), which runs its
//!   `user_value_changed` hooks if a client of that user is attached to it. The changing runtime
//!   runs them itself and skips its own change when it comes back.
//!
//! Error rule: a [`StoreError`] names the operation, the thread and the message id where there is
//! one, and for a server error its SQLSTATE and primary message only; the error's `DETAIL`, which
//! can quote a row, is dropped, so message contents never reach an error text. A connection
//! error names the server as `postgres://user@host:port/database`, never the password.
//!
//! # Where the tables are
//!
//! In the schema [`DEFAULT_SCHEMA`] (`agent_hooks`), created if absent, unless
//! [`PostgresOptions::schema`] names another or [`PostgresOptions::search_path`] leaves the
//! choice to the connection's `search_path`; the store's tables are then never mixed with the
//! application's own in `public`. When `agent_hooks` has none of the store's tables but `public`
//! does, [`PostgresStore::connect`] refuses rather than start over with empty tables, and says
//! how to keep using those.
//!
//! TLS is not negotiated (`NoTls`): run the store on a trusted network or through a local proxy.

// Each module below adds to `PostgresStore`, defined in `connection` with the state its
// modules share; `hub`, `fence` and `options` are the parts of that state, so imports run one
// way: from the feature modules and this one down to `connection`, and from there to the parts.
mod connection;
mod driver;
mod events;
mod fence;
mod hub;
// Public types, reachable only through `__test`: the runtime holds leases through `hold_run`.
#[cfg_attr(not(feature = "__test"), allow(unreachable_pub))]
pub(crate) mod lease;
mod options;
mod presence;
mod remembered;
mod schema;
mod user_events;
mod user_values;

pub use connection::PostgresStore;
pub use options::{DEFAULT_SCHEMA, PostgresOptions};

use driver::{describe_pg, pg_kind, read_snapshot};
use lease::PostgresLeases;

use std::time::Duration;

use hooks_core::{HookMessage, MessageUpdate};
use serde_json::Value;
use tokio_postgres::types::ToSql;

use crate::approval_records::{ParkedToolCall, ToolCallChange};

use super::rows::{self, Op, ParkedColumns, ParkedJson, ThreadColumns, read_message};
use super::{
    ApprovalStore, EventLog, EventSubscription, InboxEntry, InboxStore, InputTake, MessageStore,
    RememberedApprovalStore, RunOwnership, RunPermit, StoreError, StoreErrorKind, TakeStatus, ThreadRecord,
    ThreadStatus, UserChange, UserValue, inbox,
};

/// The message columns in the order [`read_message`] reads them, `seq` last.
const READ_COLUMNS: &str = "id, role, content, name, tool_calls, tool_call_id, created_at, parent_id, depth, silent, \
                            extra::text, seq";

/// Upserts one thread value; the caller's transaction makes it atomic with what goes with it.
async fn write_value(
    op: &Op<'_>,
    tx: &deadpool_postgres::Transaction<'_>,
    key: &str,
    value: &Value,
) -> Result<(), StoreError> {
    let json = rows::encode(op, format_args!("thread value `{key}`"), value)?;
    let statement = tx
        .prepare_cached(
            "INSERT INTO thread_values (thread_id, key, value) VALUES ($1, $2, $3::text::json)
             ON CONFLICT (thread_id, key) DO UPDATE SET value = excluded.value",
        )
        .await
        .map_err(op.pg())?;
    tx.execute(&statement, &[&op.thread_id, &key, &json]).await.map_err(op.pg())?;
    Ok(())
}

/// The thread `op` names and its values, read in the caller's transaction.
async fn read_thread(op: &Op<'_>, tx: &deadpool_postgres::Transaction<'_>) -> Result<Option<ThreadRecord>, StoreError> {
    let statement = tx
        .prepare_cached(
            "SELECT agent, user_id, created_at, arguments::text, status, status_reason FROM threads WHERE id = $1",
        )
        .await
        .map_err(op.pg())?;
    let Some(row) = tx.query_opt(&statement, &[&op.thread_id]).await.map_err(op.pg())? else {
        return Ok(None);
    };
    let columns = ThreadColumns::read(op, &row)?;
    let statement = tx
        .prepare_cached("SELECT key, value::text FROM thread_values WHERE thread_id = $1 ORDER BY key")
        .await
        .map_err(op.pg())?;
    let values = tx
        .query(&statement, &[&op.thread_id])
        .await
        .map_err(op.pg())?
        .iter()
        .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .collect::<Result<Vec<_>, tokio_postgres::Error>>()
        .map_err(op.pg())?;
    columns.into_record(op, values).map(Some)
}

/// Inserts `message` as the thread's next message, in the caller's transaction (whose fence is
/// checked): refused for an unknown thread or an id the thread already has.
async fn insert_row(
    op: &Op<'_>,
    tx: &deadpool_postgres::Transaction<'_>,
    message: &HookMessage,
) -> Result<(), StoreError> {
    let thread_id = op.thread_id;
    let extra = rows::extra_json(op, message)?;
    let depth = message.depth.map(i64::from);
    let role = message.role.as_str();
    Op::thread(op.name, thread_id).ensure_thread(tx, true).await?;
    let statement = tx
        .prepare_cached(
            "INSERT INTO messages (thread_id, seq, id, role, content, name, tool_calls, tool_call_id, created_at,
                                   parent_id, depth, silent, extra)
             VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE thread_id = $1),
                     $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::text::json)
             ON CONFLICT (thread_id, id) DO NOTHING",
        )
        .await
        .map_err(op.pg())?;
    let inserted = tx
        .execute(&statement, &message_params(&thread_id, &message.id, message, &role, &depth, &extra))
        .await
        .map_err(op.pg())?;
    if inserted == 0 {
        return Err(op.error(StoreErrorKind::Conflict, "the message already exists"));
    }
    Ok(())
}

#[async_trait::async_trait]
impl MessageStore for PostgresStore {
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError> {
        let op = Op::thread("create_thread", &thread.id);
        let arguments = rows::encode(&op, "the arguments", &thread.arguments)?;
        let (status, reason) = rows::status_columns(&thread.status);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO threads (id, agent, user_id, created_at, arguments, status, status_reason)
                 VALUES ($1, $2, $3, $4, $5::text::json, $6, $7) ON CONFLICT (id) DO NOTHING",
            )
            .await
            .map_err(op.pg())?;
        let inserted = tx
            .execute(
                &statement,
                &[&thread.id, &thread.agent, &thread.user_id, &thread.created_at, &arguments, &status, &reason],
            )
            .await
            .map_err(op.pg())?;
        if inserted == 0 {
            return Err(op.error(StoreErrorKind::Conflict, "the thread already exists"));
        }
        for (key, value) in &thread.values {
            write_value(&op, &tx, key, value).await?;
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError> {
        let op = Op::thread("load_thread", thread_id);
        let mut client = self.client(op.name).await?;
        // One snapshot for the thread and its values.
        let tx = read_snapshot(&mut client).await.map_err(op.pg())?;
        let record = read_thread(&op, &tx).await?;
        tx.commit().await.map_err(op.pg())?;
        Ok(record)
    }

    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError> {
        let fail = |e: tokio_postgres::Error| {
            StoreError::new(pg_kind(&e), format!("threads_of_user: user `{user_id}`: PostgreSQL: {}", describe_pg(&e)))
                .with_source(e)
        };
        let mut client = self.client("threads_of_user").await?;
        // One snapshot for the list and every thread in it.
        let tx = read_snapshot(&mut client).await.map_err(fail)?;
        let statement = tx
            .prepare_cached("SELECT id FROM threads WHERE user_id = $1 ORDER BY created_at, id")
            .await
            .map_err(fail)?;
        let ids: Vec<String> = tx
            .query(&statement, &[&user_id])
            .await
            .map_err(fail)?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()
            .map_err(fail)?;
        let mut threads = Vec::with_capacity(ids.len());
        for id in &ids {
            threads.extend(read_thread(&Op::thread("threads_of_user", id), &tx).await?);
        }
        tx.commit().await.map_err(fail)?;
        Ok(threads)
    }

    async fn set_value(&self, thread_id: &str, key: &str, value: &Value) -> Result<(), StoreError> {
        let op = Op::thread("set_value", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        op.ensure_thread(&tx, false).await?;
        write_value(&op, &tx, key, value).await?;
        tx.commit().await.map_err(op.pg())
    }

    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError> {
        let op = Op::thread("set_status", thread_id);
        let (status, reason) = rows::status_columns(status);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        let statement = tx
            .prepare_cached("UPDATE threads SET status = $2, status_reason = $3 WHERE id = $1")
            .await
            .map_err(op.pg())?;
        let changed = tx.execute(&statement, &[&thread_id, &status, &reason]).await.map_err(op.pg())?;
        if changed == 0 {
            return Err(op.error(StoreErrorKind::NotFound, "no such thread"));
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<(), StoreError> {
        let op = Op::message("insert_message", thread_id, &message.id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        insert_row(&op, &tx, message).await?;
        tx.commit().await.map_err(op.pg())
    }

    async fn hand_off(&self, thread_id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError> {
        let op = Op::thread("hand_off", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        if let Some(message) = message {
            insert_row(&Op::message("hand_off", thread_id, &message.id), &tx, message).await?;
        }
        let changed =
            tx.execute("UPDATE threads SET agent = $2 WHERE id = $1", &[&thread_id, &agent]).await.map_err(op.pg())?;
        if changed == 0 {
            return Err(op.error(StoreErrorKind::NotFound, "no such thread"));
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        let op = Op::message("update_message", thread_id, message_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        Op::thread(op.name, thread_id).ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(&format!(
                "SELECT {READ_COLUMNS} FROM messages WHERE thread_id = $1 AND id = $2 FOR NO KEY UPDATE"
            ))
            .await
            .map_err(op.pg())?;
        let Some(row) = tx.query_opt(&statement, &[&thread_id, &message_id]).await.map_err(op.pg())? else {
            return Err(op.error(StoreErrorKind::NotFound, "no such message"));
        };
        let mut message = read_message(op.name, thread_id, &row)?;
        update.apply_to(&mut message);
        let extra = rows::extra_json(&op, &message)?;
        let depth = message.depth.map(i64::from);
        let statement = tx
            .prepare_cached(
                "UPDATE messages SET role = $3, content = $4, name = $5, tool_calls = $6, tool_call_id = $7,
                     created_at = $8, parent_id = $9, depth = $10, silent = $11, extra = $12::text::json
                 WHERE thread_id = $1 AND id = $2",
            )
            .await
            .map_err(op.pg())?;
        let role = message.role.as_str();
        tx.execute(&statement, &message_params(&thread_id, &message_id, &message, &role, &depth, &extra))
            .await
            .map_err(op.pg())?;
        tx.commit().await.map_err(op.pg())?;
        Ok(message)
    }

    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError> {
        let op = Op::thread("messages", thread_id);
        let mut client = self.client(op.name).await?;
        // One snapshot for the existence check and the rows.
        let tx = read_snapshot(&mut client).await.map_err(op.pg())?;
        op.ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(&format!("SELECT {READ_COLUMNS} FROM messages WHERE thread_id = $1 ORDER BY seq"))
            .await
            .map_err(op.pg())?;
        let rows = tx.query(&statement, &[&thread_id]).await.map_err(op.pg())?;
        let messages = rows.iter().map(|row| read_message(op.name, thread_id, row)).collect::<Result<Vec<_>, _>>()?;
        tx.commit().await.map_err(op.pg())?;
        Ok(messages)
    }

    /// A row of `user_values`, read.
    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError> {
        self.read_user_values(user_id).await
    }

    /// The old value read and the new one written under an advisory lock of the user's key.
    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&Value>,
    ) -> Result<Option<Value>, StoreError> {
        self.write_user_value(user_id, key, value).await
    }

    /// Threads left `running`, with inputs accepted longer than a lease's ttl ago, or waiting
    /// for approvals with every call decided longer than a grace period ago (O6), that no live
    /// lease holds: their owner died (its lease expired, or its presence is gone at once), or
    /// never started the run.
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        let fail = |e: tokio_postgres::Error| {
            StoreError::new(pg_kind(&e), format!("unsettled_threads: PostgreSQL: {}", describe_pg(&e))).with_source(e)
        };
        let client = self.client("unsettled_threads").await?;
        let statement = client
            .prepare_cached(concat!(
                "SELECT c.id FROM (
                     SELECT id FROM threads WHERE status = 'running'
                     UNION
                     SELECT thread_id FROM thread_inbox
                     WHERE stored_at < clock_timestamp() - $1::bigint * interval '1 millisecond'
                     UNION
                     SELECT t.id FROM threads t WHERE t.status = 'awaiting_approval' AND NOT EXISTS (
                         SELECT 1 FROM parked_tool_calls p WHERE p.thread_id = t.id AND NOT p.settled
                         AND (p.state = 'pending' OR p.decided_at > $2)
                     )
                 ) c
                 WHERE NOT EXISTS (SELECT 1 FROM thread_leases l WHERE l.thread_id = c.id
                                   AND l.expires_at > clock_timestamp() AND NOT ",
                presence::owner_gone!("l"),
                ")
                 ORDER BY c.id",
            ))
            .await
            .map_err(fail)?;
        let decided_before = crate::ids::now_ms() - lease::millis(crate::approval_records::RESUME_GRACE);
        let rows = client
            .query(&statement, &[&lease::millis(self.inner.run_lease_ttl), &decided_before])
            .await
            .map_err(fail)?;
        rows.iter().map(|row| row.try_get(0).map_err(fail)).collect()
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

    fn run_ownership(&self) -> Option<&dyn RunOwnership> {
        Some(self)
    }

    fn event_log(&self) -> Option<&dyn EventLog> {
        Some(self)
    }
}

#[async_trait::async_trait]
impl RunOwnership for PostgresStore {
    /// [`PostgresOptions::recovery_sweep`]: every process sweeps, since any of them may die.
    fn recovery_sweep_interval(&self) -> Duration {
        self.inner.recovery_sweep
    }

    /// Holds the thread's lease for the run ([`PostgresOptions::run_lease_ttl`]), renewed every
    /// third of it while the run lasts, waiting up to [`PostgresOptions::run_wait`] while another
    /// process holds it.
    ///
    /// The hold is lost when a renewal finds the lease taken or expired, when no renewal
    /// succeeds for a whole ttl, or when a write finds the lease gone. Until the run releases
    /// it, every write of this store to the thread checks the lease in its own transaction and
    /// is refused once it is lost, so nothing of the old run lands after another process took
    /// the thread over; the runtime stops the run at its next step, `failed (lease_lost)`.
    async fn hold_run(&self, thread_id: &str) -> Result<RunPermit, StoreError> {
        let inner = &self.inner;
        match self.wait_for_lease(thread_id, &inner.owner, inner.run_lease_ttl, inner.run_wait).await? {
            Some(guard) => {
                let lost = guard.loss_flag();
                let lease = guard.lease();
                let took_over = lease.took_over_a_dead_run;
                inner.fences.hold(&lease.thread_id, &lease.owner, lease.epoch, lost.clone());
                let store = self.clone();
                let hold = RunPermit::new(move || async move {
                    store.inner.fences.release(&guard.lease().thread_id, guard.lease().epoch);
                    if let Err(error) = guard.release().await {
                        tracing::warn!(%error, "releasing a run's thread lease failed; it expires by itself");
                    }
                });
                Ok(hold.losable(lost.subscribe()).after_a_dead_run(took_over))
            }
            None => {
                let holder = self.lease_holder(thread_id).await?.map(|(owner, _)| owner);
                Err(StoreError::new(
                    StoreErrorKind::Busy,
                    format!(
                        "thread {thread_id} is being run by another process ({}) and was not released within {:?}",
                        holder.as_deref().unwrap_or("unknown owner"),
                        inner.run_wait
                    ),
                ))
            }
        }
    }
}

#[async_trait::async_trait]
impl EventLog for PostgresStore {
    /// [`PostgresStore::subscribe`] after the thread's last event so far.
    async fn subscribe_events(&self, thread_id: &str) -> Result<EventSubscription, StoreError> {
        let last = self.last_event_seq(thread_id).await?;
        self.subscribe(thread_id, last).await
    }

    /// The largest `seq` of the thread's events.
    async fn latest_event_seq(&self, thread_id: &str) -> Result<u64, StoreError> {
        self.last_event_seq(thread_id).await
    }

    /// [`PostgresStore::publish`] for each: the event in the events table, and a `NOTIFY`.
    async fn publish_events(&self, thread_id: &str, events: &[crate::events::ThreadEvent]) -> Result<(), StoreError> {
        for event in events {
            self.publish(thread_id, event).await?;
        }
        Ok(())
    }

    /// A row of the user events table and a `NOTIFY` naming it, in one transaction.
    async fn publish_user_change(&self, change: &UserChange) -> Result<(), StoreError> {
        self.publish_user(change).await
    }

    /// User value changes through the store's one listening connection; see
    /// [`PostgresStore::subscribe_users`].
    async fn user_changes(&self) -> Result<tokio::sync::mpsc::Receiver<UserChange>, StoreError> {
        self.subscribe_users().await
    }
}

#[async_trait::async_trait]
impl InboxStore for PostgresStore {
    async fn enqueue_input(&self, thread_id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        let op = Op::message("enqueue_input", thread_id, &entry.id);
        let message = inbox::encode(entry).map_err(|e| op.error(StoreErrorKind::Other, e))?;
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        Op::thread(op.name, thread_id).ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO thread_inbox (thread_id, id, message, enqueued_at) VALUES ($1, $2, $3::text::json, $4)
                 ON CONFLICT (thread_id, id) DO NOTHING",
            )
            .await
            .map_err(op.pg())?;
        let inserted =
            tx.execute(&statement, &[&thread_id, &entry.id, &message, &entry.enqueued_at]).await.map_err(op.pg())?;
        if inserted == 0 {
            return Err(op.error(StoreErrorKind::Conflict, "the inbox entry already exists"));
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        let op = Op::thread("pending_inputs", thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached("SELECT id, message::text, enqueued_at FROM thread_inbox WHERE thread_id = $1 ORDER BY seq")
            .await
            .map_err(op.pg())?;
        let rows = client.query(&statement, &[&thread_id]).await.map_err(op.pg())?;
        rows.iter()
            .map(|row| {
                let id: String = row.try_get(0).map_err(op.pg())?;
                let message: String = row.try_get(1).map_err(op.pg())?;
                inbox::decode(id, &message, row.try_get(2).map_err(op.pg())?)
                    .map_err(|e| op.error(StoreErrorKind::Corrupt, e))
            })
            .collect()
    }

    async fn pending_input(&self, thread_id: &str, input_id: &str) -> Result<Option<InboxEntry>, StoreError> {
        let op = Op::message("pending_input", thread_id, input_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached("SELECT message::text, enqueued_at FROM thread_inbox WHERE thread_id = $1 AND id = $2")
            .await
            .map_err(op.pg())?;
        let Some(row) = client.query_opt(&statement, &[&thread_id, &input_id]).await.map_err(op.pg())? else {
            return Ok(None);
        };
        let message: String = row.try_get(0).map_err(op.pg())?;
        let at: i64 = row.try_get(1).map_err(op.pg())?;
        inbox::decode(input_id.to_owned(), &message, at).map(Some).map_err(|e| op.error(StoreErrorKind::Corrupt, e))
    }

    /// One transaction for all, behind the fence: the input leaves the inbox exactly when its
    /// message is in, and with [`TakeStatus::Running`] the thread's status becomes `running` in
    /// it too (one commit).
    async fn take_input(&self, thread_id: &str, take: &InputTake<'_>) -> Result<bool, StoreError> {
        let op = Op::message("take_input", thread_id, take.input_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        let statement =
            tx.prepare_cached("DELETE FROM thread_inbox WHERE thread_id = $1 AND id = $2").await.map_err(op.pg())?;
        if tx.execute(&statement, &[&thread_id, &take.input_id]).await.map_err(op.pg())? == 0 {
            return Ok(false);
        }
        if let Some(message) = take.message {
            insert_row(&Op::message(op.name, thread_id, &message.id), &tx, message).await?;
        }
        if take.status == TakeStatus::Running {
            let (status, reason) = rows::status_columns(&ThreadStatus::Running);
            let statement = tx
                .prepare_cached("UPDATE threads SET status = $2, status_reason = $3 WHERE id = $1")
                .await
                .map_err(op.pg())?;
            tx.execute(&statement, &[&thread_id, &status, &reason]).await.map_err(op.pg())?;
        }
        tx.commit().await.map_err(op.pg())?;
        Ok(true)
    }
}

#[async_trait::async_trait]
impl ApprovalStore for PostgresStore {
    async fn park_tool_calls(&self, thread_id: &str, calls: &[ParkedToolCall]) -> Result<(), StoreError> {
        let op = Op::thread("park_tool_calls", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        op.ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(
                "INSERT INTO parked_tool_calls
                 (thread_id, id, position, tool, arguments, reasons, requested_at, state, decision_reason, result,
                  decided_by, decided_at, admission)
                 VALUES ($1, $2, $3, $4, $5::text::json, $6::text::json, $7, $8, $9, $10::text::json, $11, $12,
                         $13::text::json)",
            )
            .await
            .map_err(op.pg())?;
        // A settled call of a reused id gives way to the new one.
        let reused = tx
            .prepare_cached("DELETE FROM parked_tool_calls WHERE thread_id = $1 AND id = $2 AND settled")
            .await
            .map_err(op.pg())?;
        for call in calls {
            let position = i32::try_from(call.position).map_err(|e| op.error(StoreErrorKind::Other, e))?;
            let json = ParkedJson::of(&op, call)?;
            tx.execute(&reused, &[&thread_id, &call.id]).await.map_err(op.pg())?;
            tx.execute(
                &statement,
                &[
                    &thread_id,
                    &call.id,
                    &position,
                    &call.tool,
                    &json.arguments,
                    &json.reasons,
                    &call.requested_at,
                    &call.state.as_str(),
                    &call.decision_reason,
                    &json.result,
                    &call.decided_by,
                    &call.decided_at,
                    &json.admission,
                ],
            )
            .await
            .map_err(op.pg())?;
        }
        tx.commit().await.map_err(op.pg())
    }

    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError> {
        let op = Op::thread("parked_tool_calls", thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT {PARKED_SELECT} FROM parked_tool_calls WHERE thread_id = $1 AND NOT settled ORDER BY position"
            ))
            .await
            .map_err(op.pg())?;
        let rows = client.query(&statement, &[&thread_id]).await.map_err(op.pg())?;
        rows.iter().map(|row| ParkedColumns::read(&op, row)?.into_call(&op)).collect()
    }

    async fn tool_call(&self, thread_id: &str, call_id: &str) -> Result<Option<ParkedToolCall>, StoreError> {
        let op = Op::message("tool_call", thread_id, call_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached(&format!("SELECT {PARKED_SELECT} FROM parked_tool_calls WHERE thread_id = $1 AND id = $2"))
            .await
            .map_err(op.pg())?;
        let row = client.query_opt(&statement, &[&thread_id, &call_id]).await.map_err(op.pg())?;
        row.map(|row| ParkedColumns::read(&op, &row)?.into_call(&op)).transpose()
    }

    async fn advance_tool_call(&self, thread_id: &str, change: &ToolCallChange) -> Result<bool, StoreError> {
        let op = Op::thread("advance_tool_call", thread_id);
        let client = self.client(op.name).await?;
        // One conditional write (A4): of two processes deciding at once, the row lock makes the
        // second see the state the first left, and its condition fails.
        let statement = client
            .prepare_cached(
                "UPDATE parked_tool_calls SET state = $1, arguments = COALESCE($2::text::json, arguments),
                 decision_reason = COALESCE($3, decision_reason), result = COALESCE($4::text::json, result),
                 decided_by = COALESCE($8, decided_by), decided_at = COALESCE($9, decided_at)
                 WHERE thread_id = $5 AND id = $6 AND state = $7 AND NOT settled",
            )
            .await
            .map_err(op.pg())?;
        let arguments = change.arguments.as_ref().map(Value::to_string);
        let result = change.result.as_ref().map(Value::to_string);
        let moved = client
            .execute(
                &statement,
                &[
                    &change.state.as_str(),
                    &arguments,
                    &change.decision_reason,
                    &result,
                    &thread_id,
                    &change.call_id,
                    &change.from.as_str(),
                    &change.decided_by,
                    &change.decided_at,
                ],
            )
            .await
            .map_err(op.pg())?;
        Ok(moved == 1)
    }

    async fn settle_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError> {
        let op = Op::thread("settle_parked_tool_calls", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        self.check_fence(&op, &tx).await?;
        tx.execute("UPDATE parked_tool_calls SET settled = true WHERE thread_id = $1 AND NOT settled", &[&thread_id])
            .await
            .map_err(op.pg())?;
        tx.commit().await.map_err(op.pg())
    }
}

/// The columns of a parked call as [`ParkedColumns::read`] reads them, cast where it needs text.
const PARKED_SELECT: &str = "id, position::bigint, tool, arguments::text, reasons::text, requested_at, state,
    decision_reason, result::text, decided_by, decided_at, settled, admission::text";

/// The parameters of a message row's insert and update, `$1` to `$12`: the thread, the message's
/// id, then its columns in the order both statements name them. The one place the columns meet
/// the message's fields.
fn message_params<'a>(
    thread_id: &'a (dyn ToSql + Sync),
    message_id: &'a (dyn ToSql + Sync),
    message: &'a HookMessage,
    role: &'a &'a str,
    depth: &'a Option<i64>,
    extra: &'a String,
) -> [&'a (dyn ToSql + Sync); 12] {
    [
        thread_id,
        message_id,
        role,
        &message.content,
        &message.name,
        &message.tool_calls,
        &message.tool_call_id,
        &message.created_at,
        &message.parent_id,
        depth,
        &message.silent,
        extra,
    ]
}
