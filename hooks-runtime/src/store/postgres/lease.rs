//! One owner per running thread: a lease row with an expiry that its live owner renews.
//!
//! Expiry is judged by the database server's clock (`clock_timestamp()`), never by the
//! processes' clocks, so clock skew between machines does not matter.
//!
//! Crate-private: the runtime takes a lease for every run through
//! [`RunOwnership::hold_run`](crate::store::RunOwnership::hold_run), by the methods of
//! [`PostgresLeases`], through which the package's own tests drive the lease directly too
//! (feature `__test`, not public API).

use std::sync::Arc;
use std::time::Duration;

use super::connection::PostgresStore;
use crate::store::rows::Op;
use crate::store::{FailReason, StoreError};

/// A held lease on a thread, from [`PostgresLeases::try_acquire_lease`].
///
/// `epoch` grows by one every time the thread changes hands, so it also fences: a write that
/// carries the epoch it was granted can be refused once another owner has taken over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The thread.
    pub thread_id: String,
    /// Who holds it: unique per process and run, e.g. `host:pid:run`.
    pub owner: String,
    /// The how-manieth owner this is (1 for the first), across the thread's life.
    pub epoch: u64,
    /// How long the lease lasts after it is acquired or renewed.
    pub ttl: Duration,
    /// Whether the thread was left `running` by a previous owner that is gone (its lease
    /// expired mid-run): acquiring marked it `failed (owner_lost)`, see
    /// [`PostgresLeases::try_acquire_lease`].
    pub took_over_a_dead_run: bool,
}

/// A duration as whole milliseconds for SQL, at least 1.
pub(super) fn millis(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1)
}

/// A thread's lease, held, renewed and given up: the lease methods of [`PostgresStore`], in one
/// place for the runtime and the tests. Not public API: the runtime takes a lease for every run
/// through [`RunOwnership::hold_run`](crate::store::RunOwnership::hold_run); this package's
/// tests (feature `__test`) hold, renew and lose leases by hand.
pub trait PostgresLeases {
    /// Takes the thread's lease for `owner` for `ttl`, unless another lease on it is live.
    /// Returns the lease, or `None` while someone holds it (`owner` included: a lease is not
    /// re-entrant, as one run is one owner). Fails for an unknown thread.
    ///
    /// Timings: a live owner renews (see [`renew_lease`](Self::renew_lease)) well within `ttl`,
    /// e.g. every `ttl / 3`. If the owner dies, another process can take the thread `ttl` after
    /// the owner's last acquire or renewal, not earlier. A suitable `ttl` is 10 to 30 seconds:
    /// shorter takes over sooner after a crash, but an owner stalled (a long pause, a slow
    /// database) for longer than `ttl` loses its lease.
    ///
    /// A thread whose status is still `running` when its lease is acquired was left so by an
    /// owner that died mid-run (a finished run sets another status before releasing): in the
    /// same transaction its status becomes `failed (owner_lost)` ([`FailReason::OwnerLost`]) and the lease
    /// says [`took_over_a_dead_run`](Lease::took_over_a_dead_run). Everything the dead owner
    /// committed stays; every write is one transaction, so nothing is half-written.
    fn try_acquire_lease(
        &self,
        thread_id: &str,
        owner: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Option<Lease>, StoreError>> + Send;

    /// Extends a held lease by its `ttl` from now. `false` means the lease is lost (it expired,
    /// or another owner has it since): its holder must stop working on the thread.
    fn renew_lease(&self, lease: &Lease) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Gives a held lease up, so that another owner can take the thread at once. `false` means
    /// it was already lost. The row stays, expired, so that epochs keep growing.
    fn release_lease(&self, lease: &Lease) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Who holds the thread's lease now and with which epoch, or `None` when no live lease (none,
    /// expired, or its owner's presence is gone).
    fn lease_holder(&self, thread_id: &str) -> impl Future<Output = Result<Option<(String, u64)>, StoreError>> + Send;

    /// Like [`try_acquire_lease`](Self::try_acquire_lease), and keeps the lease renewed until
    /// the guard is released or dropped. `None` while another owner holds the thread.
    fn hold_lease(
        &self,
        thread_id: &str,
        owner: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Option<LeaseGuard>, StoreError>> + Send;

    /// [`hold_lease`](Self::hold_lease), waiting up to `patience` while another owner holds the
    /// thread: the way a `send` to a thread that another process is running waits its turn
    /// instead of running a second turn at once. Attempts are 10 ms apart at first, backing off
    /// to 250 ms, so a released lease is taken within about 250 ms and an expired one within
    /// that of its expiry. `None` when `patience` runs out. The first time it finds the thread
    /// held, it logs at DEBUG (target `hooks_runtime::store`) that this owner waits.
    fn wait_for_lease(
        &self,
        thread_id: &str,
        owner: &str,
        ttl: Duration,
        patience: Duration,
    ) -> impl Future<Output = Result<Option<LeaseGuard>, StoreError>> + Send;
}

/// A lease that renews itself: [`PostgresLeases::hold_lease`]. Renewal runs every third of the
/// lease's `ttl` on a task of its own; if a renewal is refused, or none succeeds for a whole
/// `ttl` (the database unreachable), the lease counts as lost and [`lost`](Self::lost) returns.
/// Dropping the guard stops renewing and releases the lease in the background.
#[derive(Debug)]
pub struct LeaseGuard {
    lease: Lease,
    store: PostgresStore,
    /// Set by the renewer, or by a write that found the lease gone (see `fence`).
    lost: Arc<tokio::sync::watch::Sender<bool>>,
    renewer: tokio::task::JoinHandle<()>,
    released: bool,
}

impl LeaseGuard {
    /// The lease held.
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// Whether the lease is lost: its holder must stop working on the thread.
    #[cfg(feature = "__test")]
    pub fn is_lost(&self) -> bool {
        *self.lost.borrow()
    }

    /// Waits until the lease is lost (forever while it is renewed), e.g. in a `select!`
    /// beside the turn that it guards.
    #[cfg(feature = "__test")]
    pub async fn lost(&mut self) {
        // The guard holds the sender, so the channel stays open while this waits.
        let _ = self.lost.subscribe().wait_for(|lost| *lost).await;
    }

    /// The flag behind `is_lost`, for whoever else learns of the loss first.
    pub(super) fn loss_flag(&self) -> Arc<tokio::sync::watch::Sender<bool>> {
        self.lost.clone()
    }

    /// Stops renewing and gives the lease up. `false` means it was already lost.
    pub async fn release(mut self) -> Result<bool, StoreError> {
        self.renewer.abort();
        self.released = true;
        self.store.release_lease(&self.lease).await
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        self.renewer.abort();
        if !self.released
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let store = self.store.clone();
            let lease = self.lease.clone();
            handle.spawn(async move {
                if let Err(error) = store.release_lease(&lease).await {
                    tracing::warn!(%error, "releasing a dropped thread lease failed; it expires by itself");
                }
            });
        }
    }
}

/// The first pause of [`PostgresLeases::wait_for_lease`] between attempts; it doubles up to
/// [`MAX_LEASE_POLL`].
const FIRST_LEASE_POLL: Duration = Duration::from_millis(10);
/// The longest pause of [`PostgresLeases::wait_for_lease`] between attempts.
const MAX_LEASE_POLL: Duration = Duration::from_millis(250);

impl PostgresLeases for PostgresStore {
    async fn try_acquire_lease(
        &self,
        thread_id: &str,
        owner: &str,
        ttl: Duration,
    ) -> Result<Option<Lease>, StoreError> {
        let op = Op::thread("try_acquire_lease", thread_id);
        let mut client = self.client(op.name).await?;
        let tx = client.transaction().await.map_err(op.pg())?;
        op.ensure_thread(&tx, false).await?;
        let statement = tx
            .prepare_cached(concat!(
                "INSERT INTO thread_leases (thread_id, owner, epoch, expires_at, presence_key)
                 VALUES ($1, $2, 1, clock_timestamp() + $3::bigint * interval '1 millisecond',
                         CASE WHEN $4 THEN hashtext($2) END)
                 ON CONFLICT (thread_id) DO UPDATE
                     SET owner = excluded.owner, epoch = thread_leases.epoch + 1, expires_at = excluded.expires_at,
                         presence_key = excluded.presence_key
                     WHERE thread_leases.expires_at <= clock_timestamp() OR ",
                super::presence::owner_gone!("thread_leases"),
                " RETURNING epoch"
            ))
            .await
            .map_err(op.pg())?;
        // Only this store's own owner has its presence; a lease for another name (the tests')
        // expires as leases did before presence.
        let present = owner == self.inner.owner && self.inner.presence.is_present();
        let Some(row) =
            tx.query_opt(&statement, &[&thread_id, &owner, &millis(ttl), &present]).await.map_err(op.pg())?
        else {
            return Ok(None);
        };
        // A thread still `running` under a lease that expired: its owner died mid-run. Saying
        // so in the same transaction means no owner ever starts on a thread that looks busy.
        let statement = tx
            .prepare_cached(
                "UPDATE threads SET status = 'failed', status_reason = $2 WHERE id = $1 AND status = 'running'",
            )
            .await
            .map_err(op.pg())?;
        let took_over_a_dead_run =
            tx.execute(&statement, &[&thread_id, &FailReason::OwnerLost.as_str()]).await.map_err(op.pg())? == 1;
        tx.commit().await.map_err(op.pg())?;
        Ok(Some(Lease {
            thread_id: thread_id.to_owned(),
            owner: owner.to_owned(),
            epoch: row.get::<_, i64>(0).unsigned_abs(),
            ttl,
            took_over_a_dead_run,
        }))
    }

    async fn renew_lease(&self, lease: &Lease) -> Result<bool, StoreError> {
        let op = Op::thread("renew_lease", &lease.thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached(
                "UPDATE thread_leases SET expires_at = clock_timestamp() + $4::bigint * interval '1 millisecond'
                 WHERE thread_id = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()",
            )
            .await
            .map_err(op.pg())?;
        let epoch = i64::try_from(lease.epoch).unwrap_or(i64::MAX);
        let changed = client
            .execute(&statement, &[&lease.thread_id, &lease.owner, &epoch, &millis(lease.ttl)])
            .await
            .map_err(op.pg())?;
        Ok(changed == 1)
    }

    async fn release_lease(&self, lease: &Lease) -> Result<bool, StoreError> {
        let op = Op::thread("release_lease", &lease.thread_id);
        let client = self.client(op.name).await?;
        let statement = client
            .prepare_cached(
                "UPDATE thread_leases SET expires_at = '-infinity'
                 WHERE thread_id = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()",
            )
            .await
            .map_err(op.pg())?;
        let epoch = i64::try_from(lease.epoch).unwrap_or(i64::MAX);
        let changed = client.execute(&statement, &[&lease.thread_id, &lease.owner, &epoch]).await.map_err(op.pg())?;
        Ok(changed == 1)
    }

    async fn lease_holder(&self, thread_id: &str) -> Result<Option<(String, u64)>, StoreError> {
        let op = Op::thread("lease_holder", thread_id);
        let client = self.client(op.name).await?;
        let row = client
            .query_opt(
                concat!(
                    "SELECT owner, epoch FROM thread_leases l WHERE thread_id = $1 AND expires_at > clock_timestamp()                      AND NOT ",
                    super::presence::owner_gone!("l")
                ),
                &[&thread_id],
            )
            .await
            .map_err(op.pg())?;
        Ok(row.map(|row| (row.get(0), row.get::<_, i64>(1).unsigned_abs())))
    }

    async fn hold_lease(&self, thread_id: &str, owner: &str, ttl: Duration) -> Result<Option<LeaseGuard>, StoreError> {
        let Some(lease) = self.try_acquire_lease(thread_id, owner, ttl).await? else {
            return Ok(None);
        };
        let lost = Arc::new(tokio::sync::watch::Sender::new(false));
        let lost_sender = lost.clone();
        let store = self.clone();
        let renewed = lease.clone();
        let renewer = tokio::spawn(async move {
            let period = (renewed.ttl / 3).max(Duration::from_millis(10));
            let mut last_success = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(period).await;
                match store.renew_lease(&renewed).await {
                    Ok(true) => last_success = tokio::time::Instant::now(),
                    Ok(false) => break,
                    Err(error) => {
                        tracing::warn!(%error, "renewing a thread lease failed; retrying");
                        if last_success.elapsed() >= renewed.ttl {
                            break;
                        }
                    }
                }
            }
            lost_sender.send_replace(true);
        });
        Ok(Some(LeaseGuard { lease, store: self.clone(), lost, renewer, released: false }))
    }

    async fn wait_for_lease(
        &self,
        thread_id: &str,
        owner: &str,
        ttl: Duration,
        patience: Duration,
    ) -> Result<Option<LeaseGuard>, StoreError> {
        let deadline = tokio::time::Instant::now() + patience;
        let mut pause = FIRST_LEASE_POLL;
        let mut waiting = false;
        loop {
            if let Some(guard) = self.hold_lease(thread_id, owner, ttl).await? {
                return Ok(Some(guard));
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            if !waiting {
                waiting = true;
                tracing::debug!(target: "hooks_runtime::store", thread = %thread_id, owner, "another owner holds the thread's lease; this owner waits for its release");
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(MAX_LEASE_POLL);
        }
    }
}
