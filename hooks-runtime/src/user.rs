//! User scope (U1): clients attaching and detaching, user values, and the user-scope hooks that
//! run for every linked hook of their kind.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use hooks_core::{ExtraFields, HookExecutionContext, HookKind, Registry, ResolvedHook, UserEvent, UserState};
use serde_json::Value;

use crate::dispatch;

#[derive(Debug, Default, Clone)]
struct UserData {
    values: ExtraFields,
    clients: Vec<String>,
}

pub(crate) struct UserScope {
    attached: Vec<ResolvedHook>,
    detached: Vec<ResolvedHook>,
    value_changed: Vec<ResolvedHook>,
    users: Mutex<HashMap<String, UserData>>,
}

impl UserScope {
    pub(crate) fn new(registry: &Registry) -> Self {
        let of_kind = |kind: HookKind| -> Vec<ResolvedHook> {
            registry
                .of_kind(kind)
                .map(|hook| ResolvedHook {
                    hook,
                    context: HookExecutionContext::agent("user scope"),
                    requirement: None,
                    optional_slot: None,
                })
                .collect()
        };
        UserScope {
            attached: of_kind(HookKind::UserClientAttached),
            detached: of_kind(HookKind::UserClientDetached),
            value_changed: of_kind(HookKind::UserValueChanged),
            users: Mutex::new(HashMap::new()),
        }
    }

    /// A client connected: runs every `user_client_attached` hook.
    pub(crate) async fn attach_client(&self, user_id: &str, client_id: &str, timeout: Duration) {
        let event = UserEvent::ClientAttached { client_id: client_id.to_owned() };
        let state = self.change(user_id, event, |data| data.clients.push(client_id.to_owned()));
        dispatch::user_event(&self.attached, timeout, &state).await;
    }

    /// A client disconnected: runs every `user_client_detached` hook.
    pub(crate) async fn detach_client(&self, user_id: &str, client_id: &str, timeout: Duration) {
        let event = UserEvent::ClientDetached { client_id: client_id.to_owned() };
        let state = self.change(user_id, event, |data| data.clients.retain(|client| client != client_id));
        dispatch::user_event(&self.detached, timeout, &state).await;
    }

    /// Sets (or, with `None`, removes) a user value: runs every `user_value_changed` hook.
    pub(crate) async fn set_value(&self, user_id: &str, key: &str, value: Option<Value>, timeout: Duration) {
        let old = self.value(user_id, key);
        let event = UserEvent::ValueChanged { key: key.to_owned(), old, new: value.clone() };
        let state = self.change(user_id, event, |data| match value {
            Some(value) => {
                data.values.insert(key.to_owned(), value);
            }
            None => {
                data.values.remove(key);
            }
        });
        dispatch::user_event(&self.value_changed, timeout, &state).await;
    }

    /// A user value.
    pub(crate) fn value(&self, user_id: &str, key: &str) -> Option<Value> {
        let users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.get(user_id).and_then(|data| data.values.get(key).cloned())
    }

    /// Applies a change and returns the user's state after it.
    fn change(&self, user_id: &str, event: UserEvent, apply: impl FnOnce(&mut UserData)) -> UserState {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        let data = users.entry(user_id.to_owned()).or_default();
        apply(data);
        UserState { user_id: user_id.to_owned(), values: data.values.clone(), clients: data.clients.clone(), event }
    }
}
