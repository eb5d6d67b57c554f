//! What a built runtime shares with its threads, grouped by what changes together: the
//! registries (fixed at build), the governors of tool calls, the limits (a `Copy` value), and
//! the services that live with the runtime (the store, the user scope and recovery's
//! bookkeeping). The live threads are the thread layer's (`thread::live_threads`), held by the
//! runtime's handle beside this. [`Runtime`](crate::Runtime) is the public handle over it; the
//! thread modules depend on this and never on the handle.

use std::sync::Arc;

use super::history_buffers::HistoryBuffers;
use super::recovery_state::RecoveryState;
use super::registries::Registries;
use crate::governing::governors::Governors;
use crate::limits::Limits;
use crate::store::MessageStore;
use crate::user::UserScope;

/// A built runtime's state, one per runtime, behind the `Runtime` handle's `Arc`.
pub(crate) struct RuntimeInner {
    pub(crate) registries: Registries,
    pub(crate) governors: Governors,
    pub(crate) limits: Limits,
    pub(crate) store: Arc<dyn MessageStore>,
    pub(crate) users: UserScope,
    /// Recovery of runs left unsettled by a process that stopped (`crate::thread::recovery`).
    pub(crate) recovery: RecoveryState,
    /// Buffers for the snapshots `filter_messages` chains are handed, reused between assemblies.
    pub(crate) history_buffers: HistoryBuffers,
}

impl RuntimeInner {
    /// The user's values as the user-scope hooks see them: read from the store, where every
    /// process keeps them. A failed read is logged, and the hooks see no values rather than
    /// not running.
    pub(crate) async fn user_values_for_hooks(&self, user_id: &str) -> hooks_core::ExtraFields {
        match self.store.user_values(user_id).await {
            Ok(values) => values.into_iter().map(|value| (value.key, value.value)).collect(),
            Err(error) => {
                tracing::error!(target: "hooks_runtime::user", user = %user_id, "user-scope hooks run without the user's values: {error}");
                hooks_core::ExtraFields::new()
            }
        }
    }
}
