//! A runtime's recovery bookkeeping, kept with the runtime's state; what recovery does is in
//! `crate::thread::recovery`.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use tokio::sync::OnceCell;

/// What recovery does with a turn that its process's death interrupted (O8); set with
/// [`RuntimeBuilder::recovery_policy`](crate::RuntimeBuilder::recovery_policy).
///
/// ```
/// use hooks_runtime::RecoveryPolicy;
///
/// assert_eq!(RecoveryPolicy::default(), RecoveryPolicy::Resume);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum RecoveryPolicy {
    /// The turn goes on where it stopped: calls that were running keep their "interrupted"
    /// results and never run again, the model is asked again, and the person gets a reply
    /// without sending again.
    #[default]
    Resume,
    /// The turn stops: the thread becomes `failed (owner_lost)` with its history made
    /// provider-valid, and waits for the next message.
    Settle,
}

/// A runtime's recovery bookkeeping.
#[derive(Default)]
pub(crate) struct RecoveryState {
    /// What recovery does with an interrupted turn.
    pub(crate) policy: RecoveryPolicy,
    /// The recovery of the first use, done once.
    pub(crate) first_use: OnceCell<()>,
    /// Whether the sweeper of a shared store runs (it starts once).
    pub(crate) sweeping: std::sync::atomic::AtomicBool,
    /// Threads being recovered now (settled, or their inbox running), so a sweep that comes
    /// round again does not start a second recovery of one thread.
    pub(crate) busy: Mutex<HashSet<String>>,
    /// Threads whose run this process is running now, by handle count: never recovered, as
    /// their `running` is true.
    live: Mutex<HashMap<String, usize>>,
}

impl RecoveryState {
    pub(crate) fn new(policy: RecoveryPolicy) -> Self {
        RecoveryState { policy, ..RecoveryState::default() }
    }

    /// A run of `thread_id` started (`true`) or ended (`false`) in this process.
    pub(crate) fn note_run(&self, thread_id: &str, running: bool) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        if running {
            *live.entry(thread_id.to_owned()).or_default() += 1;
        } else if let Some(count) = live.get_mut(thread_id) {
            *count -= 1;
            if *count == 0 {
                live.remove(thread_id);
            }
        }
    }

    pub(crate) fn is_live(&self, thread_id: &str) -> bool {
        self.live.lock().unwrap_or_else(PoisonError::into_inner).contains_key(thread_id)
    }
}
