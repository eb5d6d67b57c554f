//! When a request last used a thread entry, for eviction.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// The last use of an entry, on tokio's clock, as the eviction timer that reads it is: a
/// paused-time test controls both.
pub(crate) struct IdleClock(Mutex<Instant>);

impl Default for IdleClock {
    fn default() -> Self {
        IdleClock(Mutex::new(Instant::now()))
    }
}

impl IdleClock {
    /// The entry is used now.
    pub(crate) fn touch(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// Whether the last use was `idle` ago or longer.
    pub(crate) fn unused_for(&self, idle: Duration) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).elapsed() >= idle
    }
}
