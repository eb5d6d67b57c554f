//! The turn a thread's runs take: held by a run from its `run_started` to its `run_finished`,
//! so runs of one thread and their events never interleave.

use std::sync::Arc;

use tokio::sync::{Mutex, OwnedMutexGuard};

/// The gate of one thread's runs.
#[derive(Debug, Default)]
pub(crate) struct RunGate(Arc<Mutex<()>>);

impl RunGate {
    /// Waits for the turn; it is given back when the guard is dropped.
    pub(crate) async fn turn(&self) -> OwnedMutexGuard<()> {
        self.0.clone().lock_owned().await
    }

    /// Whether a run holds the turn now.
    pub(crate) fn is_taken(&self) -> bool {
        self.0.try_lock().is_err()
    }
}
