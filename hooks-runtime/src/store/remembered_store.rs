//! The [`RememberedApprovalStore`] capability: approvals a person chose to remember (A9).

use super::StoreError;
use crate::remembered_approvals::RememberedApproval;

/// A store's remembered approvals (A9): kept durably, so that they answer asks after a restart
/// and in every process sharing the store, until revoked. A store that keeps them implements
/// this trait and returns itself from
/// [`MessageStore::remembered_approvals`](super::MessageStore::remembered_approvals).
///
/// ```
/// use hooks_runtime::approvals::{ApprovalMatcher, RememberScope, RememberedApproval};
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = InMemoryStore::new();
/// let remembered = store.remembered_approvals().expect("the in-memory store keeps them");
/// let npm = ApprovalMatcher::Pattern { rule: "Bash(npm test:*)".into() };
/// remembered.remember_approval(&RememberedApproval::new("ra_1", RememberScope::Always, "Bash", npm)).await?;
/// assert_eq!(remembered.list_remembered_approvals(Some("Bash")).await?.len(), 1);
/// assert!(remembered.list_remembered_approvals(Some("Read")).await?.is_empty());
/// assert!(remembered.revoke_remembered_approval("ra_1").await?);
/// assert!(!remembered.revoke_remembered_approval("ra_1").await?, "already revoked");
/// # Ok::<(), hooks_runtime::store::StoreError>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait RememberedApprovalStore: Send + Sync {
    /// Keeps `approval`. An approval of the same id is refused as a conflict.
    async fn remember_approval(&self, approval: &RememberedApproval) -> Result<(), StoreError>;

    /// The remembered approvals, oldest first (by `created_at`, then id): those of `tool` when
    /// given, else all.
    async fn list_remembered_approvals(&self, tool: Option<&str>) -> Result<Vec<RememberedApproval>, StoreError>;

    /// Removes remembered approval `id`: `true` when it was kept, `false` when there is none of
    /// that id (never was, or already revoked).
    async fn revoke_remembered_approval(&self, id: &str) -> Result<bool, StoreError>;
}
