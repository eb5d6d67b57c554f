use serde::{Deserialize, Serialize};

use super::extra::ExtraFields;

/// What happened in the user scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum UserEvent {
    /// A client connected to the user event stream.
    ClientAttached {
        /// The client's id.
        client_id: String,
    },
    /// A client disconnected.
    ClientDetached {
        /// The client's id.
        client_id: String,
    },
    /// A user value changed.
    ValueChanged {
        /// The value's key.
        key: String,
        /// The value before, if there was one.
        old: Option<serde_json::Value>,
        /// The value now; `None` when it was removed.
        new: Option<serde_json::Value>,
    },
}

/// What user-scope hooks receive in place of a `ThreadState`: the user, their values, and the
/// event that triggered the hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UserState {
    /// The user's id.
    pub user_id: String,
    /// The user's values after the event.
    pub values: ExtraFields,
    /// Clients connected after the event.
    pub clients: Vec<String>,
    /// What happened.
    pub event: UserEvent,
}

impl UserState {
    /// The state of user `user_id` on `event`, with no values and no clients.
    pub fn new(user_id: impl Into<String>, event: UserEvent) -> Self {
        UserState { user_id: user_id.into(), values: ExtraFields::new(), clients: Vec::new(), event }
    }

    /// The state with the user's values after the event.
    #[must_use]
    pub fn with_values(mut self, values: ExtraFields) -> Self {
        self.values = values;
        self
    }

    /// The state with the clients connected after the event.
    #[must_use]
    pub fn with_clients(mut self, clients: Vec<String>) -> Self {
        self.clients = clients;
        self
    }

    /// A user value by key.
    pub fn value(&self, key: &str) -> Option<&serde_json::Value> {
        self.values.get(key)
    }
}
