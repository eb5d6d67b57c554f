//! Fencing: while a run of this store holds a thread's lease ([`RunOwnership::hold_run`]), every
//! write of this store to that thread checks, inside its own transaction, that the lease is still
//! this run's and still live. A run that lost its lease (it expired, or another process took the
//! thread over) therefore writes nothing more for the thread, however late it notices.
//!
//! The check locks the lease row `FOR SHARE` before anything else, so a takeover (which updates
//! that row) waits for a write that passed the check to commit: every write of the old owner
//! commits before the new owner's lease exists, and none after. Taking the lease row first, then
//! the thread row, is the order in which a takeover takes them too, so the two never deadlock.
//!
//! [`RunOwnership::hold_run`]: crate::store::RunOwnership::hold_run

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use crate::store::rows::Op;
use crate::store::{StoreError, StoreErrorKind};

/// What a write of a fenced thread must find in its lease row.
#[derive(Clone)]
pub(super) struct Fence {
    owner: String,
    epoch: i64,
    /// Set when a write finds the lease gone, so the run stops before its next step.
    lost: Arc<watch::Sender<bool>>,
}

/// The threads whose lease a run of this store holds, by thread id.
#[derive(Default)]
pub(super) struct Fences {
    held: Mutex<HashMap<String, Fence>>,
}

impl Fences {
    /// From now on, writes to the thread need the lease of `owner` and `epoch` (a
    /// [`Lease`](super::lease::Lease)'s fields; passed as such so that the store's shared state
    /// does not depend on the lease module, which adds methods to the store).
    pub(super) fn hold(&self, thread_id: &str, owner: &str, epoch: u64, lost: Arc<watch::Sender<bool>>) {
        let fence = Fence { owner: owner.to_owned(), epoch: sql_epoch(epoch), lost };
        self.held.lock().unwrap_or_else(PoisonError::into_inner).insert(thread_id.to_owned(), fence);
    }

    /// Writes to the thread go unchecked again (its run, holding the lease of `epoch`, ended),
    /// unless a newer lease of this store fences it by now.
    pub(super) fn release(&self, thread_id: &str, epoch: u64) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.get(thread_id).is_some_and(|fence| fence.epoch == sql_epoch(epoch)) {
            held.remove(thread_id);
        }
    }

    /// Marks every run of this store lost: the store stopped being present (see `presence`), so
    /// other processes may take its threads over.
    pub(super) fn lose_all(&self) {
        for fence in self.held.lock().unwrap_or_else(PoisonError::into_inner).values() {
            fence.lost.send_replace(true);
        }
    }

    /// The fence of a thread, if a run of this store holds it.
    pub(super) fn of(&self, thread_id: &str) -> Option<Fence> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).get(thread_id).cloned()
    }
}

fn sql_epoch(epoch: u64) -> i64 {
    i64::try_from(epoch).unwrap_or(i64::MAX)
}

/// The sentence a refused write ends with.
const REFUSED_FOR_A_LOST_LEASE: &str = "this process's lease on the thread is lost (it expired, or another process took \
                                                   the thread over); nothing was written";

impl Fence {
    /// Refuses the write, and marks the lease lost, unless the lease row is still this run's
    /// and live. Call it first in the write's transaction (see the module docs for why first).
    pub(super) async fn check(&self, op: &Op<'_>, tx: &deadpool_postgres::Transaction<'_>) -> Result<(), StoreError> {
        let statement = tx
            .prepare_cached(
                "SELECT 1 FROM thread_leases
                 WHERE thread_id = $1 AND owner = $2 AND epoch = $3 AND expires_at > clock_timestamp()
                 FOR SHARE",
            )
            .await
            .map_err(op.pg())?;
        let live = tx.query_opt(&statement, &[&op.thread_id, &self.owner, &self.epoch]).await.map_err(op.pg())?;
        if live.is_some() {
            Ok(())
        } else {
            self.lost.send_replace(true);
            Err(op.error(StoreErrorKind::LeaseLost, REFUSED_FOR_A_LOST_LEASE))
        }
    }
}
