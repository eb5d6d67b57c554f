//! The [`ApprovalStore`] capability: parked tool calls and the ledger of their decisions.

use super::StoreError;
use crate::approval_records::{ApprovalState, ParkedToolCall, ToolCallChange};

/// A store's approvals: the calls of a step that waits for a person (A1), kept with the thread so
/// that they survive a restart and every process sharing the store sees them (A2), decided by
/// one conditional write each (A4), and kept after their step as the ledger of their decisions
/// (O7). A store that keeps them implements this trait and returns itself from
/// [`MessageStore::approvals`](super::MessageStore::approvals).
///
/// ```
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// let store = InMemoryStore::new();
/// assert!(store.approvals().is_some());
/// ```
#[async_trait::async_trait]
pub trait ApprovalStore: Send + Sync {
    /// Parks the calls of a step that waits for approvals. Fails for an unknown thread.
    async fn park_tool_calls(&self, thread_id: &str, calls: &[ParkedToolCall]) -> Result<(), StoreError>;

    /// The calls of the thread's parked step (not yet [settled](ApprovalStore::settle_parked_tool_calls)),
    /// in the step's call order.
    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError>;

    /// Parked call `call_id` of the thread, settled or not: the ledger of a decision (O7), which
    /// answers for as long as the thread lives. When a later step parked a call of the same id
    /// (a model that reuses ids), that later call.
    async fn tool_call(&self, thread_id: &str, call_id: &str) -> Result<Option<ParkedToolCall>, StoreError>;

    /// Moves parked call `call_id` from state `from` as `change` says, in one conditional
    /// write: `Ok(true)` when it was in `from` and moved, `Ok(false)` (and nothing written) when
    /// it was not, for example because another process decided it first (A4).
    async fn advance_tool_call(
        &self,
        thread_id: &str,
        call_id: &str,
        from: ApprovalState,
        change: &ToolCallChange,
    ) -> Result<bool, StoreError>;

    /// Settles the thread's parked step once its results are stored: its calls leave
    /// [`parked_tool_calls`](ApprovalStore::parked_tool_calls) and stay readable through
    /// [`tool_call`](ApprovalStore::tool_call), each with its decision and result.
    async fn settle_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError>;
}
