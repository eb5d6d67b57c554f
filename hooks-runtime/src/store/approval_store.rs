//! The [`ApprovalStore`] capability: parked tool calls and the ledger of their decisions.

use super::StoreError;
use crate::approval_records::{ParkedToolCall, ToolCallChange};

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

    /// Moves parked call [`change.call_id`](ToolCallChange::call_id) from state
    /// [`change.from`](ToolCallChange::from) as `change` says, in one conditional write:
    /// `Ok(true)` when it was in `from` and moved, `Ok(false)` (and nothing written) when it was
    /// not, for example because another process decided it first (A4).
    ///
    /// ```
    /// use hooks_runtime::approvals::{ApprovalState, ParkedToolCall, ToolCallChange};
    /// use hooks_runtime::store::{InMemoryStore, MessageStore, ThreadRecord};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = InMemoryStore::new();
    /// store.create_thread(&ThreadRecord::new("t1", "support", 0)).await?;
    /// let approvals = store.approvals().expect("the in-memory store keeps approvals");
    /// let call = ParkedToolCall::new("call_1", "refund", serde_json::json!({}), 0, ApprovalState::Pending);
    /// approvals.park_tool_calls("t1", &[call]).await?;
    /// let approve = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved).by("person");
    /// assert!(approvals.advance_tool_call("t1", &approve).await?);
    /// assert!(!approvals.advance_tool_call("t1", &approve).await?, "no longer pending");
    /// # Ok::<(), hooks_runtime::store::StoreError>(())
    /// # }).unwrap();
    /// ```
    async fn advance_tool_call(&self, thread_id: &str, change: &ToolCallChange) -> Result<bool, StoreError>;

    /// Settles the thread's parked step once its results are stored: its calls leave
    /// [`parked_tool_calls`](ApprovalStore::parked_tool_calls) and stay readable through
    /// [`tool_call`](ApprovalStore::tool_call), each with its decision and result.
    async fn settle_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError>;
}
