//! The [`RunOwnership`] capability of a store that several processes share, and the
//! [`RunPermit`] it grants.

use std::fmt;
use std::time::Duration;

use super::StoreError;

/// One running owner per thread on a store that several processes share (O3): a run holds its
/// thread in the store, so that no two processes run turns of one thread at once, and a thread
/// whose owner died is found and settled by a live process. A store that one process owns has
/// no need of it: the runtime's own per-thread lock runs one turn at a time.
///
/// A store that offers it returns itself from
/// [`MessageStore::run_ownership`](super::MessageStore::run_ownership); the runtime then also
/// rereads a thread's agent and values at the start of each run, since another process may have
/// changed them (O2).
///
/// ```
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// // One process owns an in-memory store.
/// assert!(InMemoryStore::new().run_ownership().is_none());
/// ```
#[async_trait::async_trait]
pub trait RunOwnership: Send + Sync {
    /// Takes the right to run `thread_id` for this process, for as long as the returned
    /// [`RunPermit`] lives, waiting while another owner runs the thread and taking the thread over
    /// from a dead one ([`RunPermit::took_over_a_dead_run`]). The runtime calls it at the start of
    /// every run, after its own per-thread lock.
    async fn hold_run(&self, thread_id: &str) -> Result<RunPermit, StoreError>;

    /// How often every runtime on this store looks for threads whose owner died
    /// ([`MessageStore::unsettled_threads`](super::MessageStore::unsettled_threads)) while it
    /// runs, so that a crashed process's threads settle without waiting for a restart.
    fn recovery_sweep_interval(&self) -> Duration;
}

/// The right to run one thread, from [`RunOwnership::hold_run`]. The runtime gives it back with
/// [`RunPermit::release`] when the run ends; one dropped instead (the run's future was dropped)
/// is given back from a spawned task.
///
/// A permit of a store that several processes share can be lost while the run goes on (its lease
/// expired, or another process took the thread over): [`RunPermit::lost`] then returns, the runtime
/// stops the run at its next step, and the store refuses the run's further writes.
pub struct RunPermit {
    /// In a mutex only so that the permit is `Sync` (a run borrows it across awaits).
    release: std::sync::Mutex<Option<BoxedReleaseFn>>,
    lost: Option<tokio::sync::watch::Receiver<bool>>,
    took_over_a_dead_run: bool,
}

type BoxedRelease = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
type BoxedReleaseFn = Box<dyn FnOnce() -> BoxedRelease + Send>;

impl RunPermit {
    /// A permit that `release` gives back (releasing a lease, unlocking a row), and that is never
    /// lost.
    pub fn new<F, Fut>(release: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let release: BoxedReleaseFn = Box::new(move || Box::pin(release()));
        RunPermit { release: std::sync::Mutex::new(Some(release)), lost: None, took_over_a_dead_run: false }
    }

    /// The same permit, taken over from an owner that died mid-run (the store already marked the
    /// thread `failed (owner_lost)`): the runtime first answers the dead run's open tool calls
    /// and announces the status, as its recovery would.
    pub fn after_a_dead_run(mut self, took_over: bool) -> Self {
        self.took_over_a_dead_run = took_over;
        self
    }

    /// Whether this permit was taken over from an owner that died mid-run.
    pub fn took_over_a_dead_run(&self) -> bool {
        self.took_over_a_dead_run
    }

    /// The same permit, lost once `lost` turns `true`.
    pub fn losable(mut self, lost: tokio::sync::watch::Receiver<bool>) -> Self {
        self.lost = Some(lost);
        self
    }

    /// Whether the permit is lost: the run must stop, and nothing more it writes is stored.
    pub fn is_lost(&self) -> bool {
        self.lost.as_ref().is_some_and(|lost| *lost.borrow())
    }

    /// Waits until the permit is lost; forever for a permit that cannot be.
    pub async fn lost(&self) {
        match self.lost.clone() {
            // An error means the sender is gone, which happens once the permit is released.
            Some(mut lost) => {
                if lost.wait_for(|lost| *lost).await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending().await,
        }
    }

    /// Gives the thread back, so the next run (of any process) can start at once.
    pub async fn release(self) {
        if let Some(release) = self.take_release() {
            release().await;
        }
    }
}

impl RunPermit {
    fn take_release(&self) -> Option<BoxedReleaseFn> {
        self.release.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

impl Drop for RunPermit {
    fn drop(&mut self) {
        if let Some(release) = self.take_release()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(release());
        }
    }
}

impl fmt::Debug for RunPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunPermit(..)")
    }
}
