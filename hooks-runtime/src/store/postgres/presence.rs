//! A store's presence: how another process tells at once that this one died, rather than when
//! its run's lease expires (O3).
//!
//! Each store keeps one connection of its own, outside the pool, holding a session-level advisory
//! lock keyed by its owner id for as long as the store lives. PostgreSQL frees a session's locks
//! when the session ends, so when the process dies (SIGKILL included: the server sees the socket
//! close) the lock is gone within moments. A lease written while the store is present carries
//! the lock's key (`thread_leases.presence_key`); a lease whose key no session holds belongs to a
//! dead owner and is taken over, and its thread recovered, without waiting for its expiry.
//!
//! A live process whose presence connection fails stops counting as present the moment it
//! fails: every run of the store is marked lost (the runtime stops it at its next step, and the
//! fence refuses its writes), then the connection is made again. A heartbeat every
//! [`HEARTBEAT`] finds a connection that died quietly. A lease written without presence (before
//! the connection is made, after it failed, or by a build older than schema version 9) expires
//! at the end of its time to live, `run_lease_ttl`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::task::AbortHandle;
use tokio_postgres::NoTls;

use super::fence::Fences;

/// How often the presence connection is checked.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long a heartbeat may take before the connection counts as failed.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long to wait before connecting again after a failure.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// The advisory lock's first key, the same for every store: the second is `hashtext(owner)`.
/// Owner ids are unique (a process id and a random part), so no namespace is needed.
macro_rules! presence_lock_class {
    () => {
        "hashtext('hooks-runtime presence')"
    };
}

/// The SQL condition that the lease row `$lease` (an alias) belongs to an owner that was present
/// when it wrote the lease and is gone now: no session of this database holds its lock.
macro_rules! owner_gone {
    ($lease:literal) => {
        concat!(
            "(",
            $lease,
            ".presence_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' \
             AND k.granted AND k.objsubid = 2 AND k.classid = ",
            $crate::store::postgres::presence::presence_lock_class!(),
            "::oid AND k.objid = ",
            $lease,
            ".presence_key::oid AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())))"
        )
    };
}
pub(super) use {owner_gone, presence_lock_class};

/// Whether this store is present now, shared with the task that keeps it so; the task ends with
/// the store.
pub(super) struct Presence {
    present: Arc<AtomicBool>,
    task: AbortHandle,
}

impl Presence {
    /// Starts keeping `owner` present over its own connection made with `config`. It is present
    /// once [`is_present`](Self::is_present) says so; until then leases are written without it.
    pub(super) fn start(config: tokio_postgres::Config, owner: String, fences: Arc<Fences>) -> Self {
        let present = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(keep_present(config, owner, fences, present.clone())).abort_handle();
        Presence { present, task }
    }

    /// Whether a lease written now may carry the presence key.
    pub(super) fn is_present(&self) -> bool {
        self.present.load(Ordering::Acquire)
    }

    /// Waits until present, for at most `limit`: a store that has just connected writes its
    /// first leases with presence when the server allows it at once.
    pub(super) async fn settle(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while !self.is_present() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        // Dropping the task drops the connection, which frees the lock.
        self.task.abort();
    }
}

/// Connects, takes the lock and checks the connection until it fails, then marks every run of
/// the store lost and starts again; forever, until aborted.
async fn keep_present(config: tokio_postgres::Config, owner: String, fences: Arc<Fences>, present: Arc<AtomicBool>) {
    let mut config = config;
    // So an operator can tell the presence connections apart in `pg_stat_activity`.
    config.application_name("hooks-runtime presence");
    loop {
        if let Err(error) = hold_lock(&config, &owner, &present).await {
            if present.swap(false, Ordering::AcqRel) {
                tracing::warn!(target: "hooks_runtime::store", %owner, "the store's presence connection failed ({error}); its runs stop, and it connects again");
                fences.lose_all();
            } else {
                tracing::debug!(target: "hooks_runtime::store", %owner, "no presence connection yet: {error}");
            }
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}

/// One presence connection's life: returns (with why) when it fails or the lock cannot be had.
async fn hold_lock(config: &tokio_postgres::Config, owner: &str, present: &AtomicBool) -> Result<(), String> {
    let (client, connection) = config.connect(NoTls).await.map_err(|e| super::driver::describe_pg(&e))?;
    let mut connection = tokio::spawn(connection);
    let locked: bool = client
        .query_one(concat!("SELECT pg_try_advisory_lock(", presence_lock_class!(), ", hashtext($1))"), &[&owner])
        .await
        .map_err(|e| super::driver::describe_pg(&e))?
        .get(0);
    if !locked {
        // Another live owner's id hashes alike: this store's leases expire as they did before.
        return Err("another session holds this owner's presence lock (a hash collision)".to_owned());
    }
    present.store(true, Ordering::Release);
    loop {
        tokio::select! {
            ended = &mut connection => {
                return Err(match ended {
                    Ok(Ok(())) => "the server closed the connection".to_owned(),
                    Ok(Err(e)) => super::driver::describe_pg(&e),
                    Err(_) => "the connection's task stopped".to_owned(),
                });
            }
            () = tokio::time::sleep(HEARTBEAT) => {
                match tokio::time::timeout(HEARTBEAT_TIMEOUT, client.simple_query("SELECT 1")).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(e)) => return Err(super::driver::describe_pg(&e)),
                    Err(_) => return Err(format!("a heartbeat took over {HEARTBEAT_TIMEOUT:?}")),
                }
            }
        }
    }
}
