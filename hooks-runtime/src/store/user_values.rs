//! What a store keeps of a user: values, and the changes other processes are told of.

use serde::{Deserialize, Serialize};

/// One stored user value ([`MessageStore::user_values`](super::MessageStore::user_values)).
///
/// ```
/// use hooks_runtime::store::UserValue;
///
/// let value = UserValue::new("theme", serde_json::json!("dark"), 1_700_000_000_000);
/// assert_eq!(value.key, "theme");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserValue {
    /// The key.
    pub key: String,
    /// The value.
    pub value: serde_json::Value,
    /// When it was last set, milliseconds since the Unix epoch.
    pub updated_at: i64,
}

impl UserValue {
    /// Value `value` of `key`, last set at `updated_at` (milliseconds since the Unix epoch).
    pub fn new(key: impl Into<String>, value: serde_json::Value, updated_at: i64) -> Self {
        UserValue { key: key.into(), value, updated_at }
    }
}

/// Something that happened to a user, on its way between processes
/// ([`EventLog::publish_user_change`](super::EventLog::publish_user_change)): a user value change or a new thread of the user.
///
/// ```
/// use hooks_runtime::store::{UserChange, UserChangeKind};
///
/// let kind = UserChangeKind::ValueChanged { key: "theme".into(), old: None, new: Some(serde_json::json!("dark")) };
/// let change = UserChange::new("runtime_a", "alice", kind);
/// assert_eq!(change.key(), Some("theme"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserChange {
    /// The runtime that made the change, so that it skips its own (each runtime has its own).
    pub origin: String,
    /// The user.
    pub user_id: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: UserChangeKind,
}

impl UserChange {
    /// `kind` happened to `user_id`, made by runtime `origin`.
    pub fn new(origin: impl Into<String>, user_id: impl Into<String>, kind: UserChangeKind) -> Self {
        UserChange { origin: origin.into(), user_id: user_id.into(), kind }
    }

    /// The user value's key, for a value change.
    pub fn key(&self) -> Option<&str> {
        match &self.kind {
            UserChangeKind::ValueChanged { key, .. } => Some(key),
            UserChangeKind::ThreadCreated { .. } => None,
        }
    }
}

/// What a [`UserChange`] carries; its JSON names it in `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserChangeKind {
    /// A user value was set or removed.
    ValueChanged {
        /// The user value's key.
        key: String,
        /// The value before, as the store had it when the change was made.
        old: Option<serde_json::Value>,
        /// The value after; `None` removed it.
        new: Option<serde_json::Value>,
    },
    /// A thread of the user was created.
    ThreadCreated {
        /// The new thread's id.
        thread_id: String,
        /// Its agent.
        agent: String,
    },
}
