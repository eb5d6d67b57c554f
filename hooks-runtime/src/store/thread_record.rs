//! A thread as a store keeps it.

use serde::{Deserialize, Serialize};

use crate::events::ThreadStatus;

/// A persisted thread: identity, status and thread values.
///
/// ```
/// use hooks_runtime::store::{ThreadRecord, ThreadStatus};
///
/// let mut thread = ThreadRecord::new("t1", "support", 1_700_000_000_000);
/// thread.user_id = Some("alice".into());
/// assert_eq!(thread.status, ThreadStatus::Idle);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThreadRecord {
    /// The thread id.
    pub id: String,
    /// The agent that owns the thread.
    pub agent: String,
    /// The associated user.
    pub user_id: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Invocation arguments.
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The thread's status.
    pub status: ThreadStatus,
    /// The thread values (`set_value`), kept with the thread (M11).
    #[serde(default)]
    pub values: serde_json::Map<String, serde_json::Value>,
}

impl ThreadRecord {
    /// Thread `id` of `agent`, created at `created_at` (milliseconds since the Unix epoch):
    /// `idle`, with no user, arguments or values until they are set.
    pub fn new(id: impl Into<String>, agent: impl Into<String>, created_at: i64) -> Self {
        ThreadRecord {
            id: id.into(),
            agent: agent.into(),
            user_id: None,
            created_at,
            arguments: serde_json::Map::new(),
            status: ThreadStatus::Idle,
            values: serde_json::Map::new(),
        }
    }
}
