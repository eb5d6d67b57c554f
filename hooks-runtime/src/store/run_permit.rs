//! The right to run one thread, as a store grants it.

use std::fmt;

/// The right to run one thread, from [`MessageStore::hold_run`](super::MessageStore::hold_run). The runtime gives it back with
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
