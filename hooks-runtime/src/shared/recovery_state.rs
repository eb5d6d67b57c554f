//! A runtime's recovery bookkeeping, kept with the runtime's state; what recovery does is in
//! `crate::thread::recovery`.

use std::collections::HashSet;
use std::sync::Mutex;

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
}

impl RecoveryState {
    pub(crate) fn new(policy: RecoveryPolicy) -> Self {
        RecoveryState { policy, ..RecoveryState::default() }
    }
}
