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
    /// Scale-out: user value changes to and from other processes.
    pub(crate) sync: UserSync,
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
            sync: UserSync::new(),
        }
    }

    /// A client connected: runs every `user_client_attached` hook.
    pub(crate) async fn attach_client(&self, user_id: &str, client_id: &str, timeout: Duration) {
        let event = UserEvent::ClientAttached { client_id: client_id.to_owned() };
        let state = self.change(user_id, event, |data| data.clients.push(client_id.to_owned()));
        dispatch::await_point!(dispatch::user_event(&self.attached, timeout, &state));
    }

    /// A client disconnected: runs every `user_client_detached` hook.
    pub(crate) async fn detach_client(&self, user_id: &str, client_id: &str, timeout: Duration) {
        let event = UserEvent::ClientDetached { client_id: client_id.to_owned() };
        let state = self.change(user_id, event, |data| data.clients.retain(|client| client != client_id));
        dispatch::await_point!(dispatch::user_event(&self.detached, timeout, &state));
    }

    /// A user value change made here (`event` is a `ValueChanged`): applied to the user's
    /// values, then every `user_value_changed` hook runs.
    pub(crate) async fn change_value(&self, user_id: &str, event: UserEvent, timeout: Duration) {
        let state = self.apply_value_change(user_id, event);
        dispatch::await_point!(dispatch::user_event(&self.value_changed, timeout, &state));
    }

    /// A change another runtime made (scale-out): applied to this runtime's copy of the user's
    /// values; the `user_value_changed` hooks run only if a client of the user is attached here.
    pub(crate) async fn apply_remote(&self, change: crate::store::UserChange, timeout: Duration) {
        let crate::store::UserChange { user_id, key, old, new, .. } = change;
        let state = self.apply_value_change(&user_id, UserEvent::ValueChanged { key, old, new });
        if !state.clients.is_empty() {
            dispatch::await_point!(dispatch::user_event(&self.value_changed, timeout, &state));
        }
    }

    fn apply_value_change(&self, user_id: &str, event: UserEvent) -> UserState {
        let UserEvent::ValueChanged { key, new, .. } = &event else {
            unreachable!("a value change is a `ValueChanged` event")
        };
        let (key, new) = (key.clone(), new.clone());
        self.change(user_id, event, |data| match new {
            Some(value) => {
                data.values.insert(key, value);
            }
            None => {
                data.values.remove(&key);
            }
        })
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

/// Scale-out: a runtime's side of the exchange of user value changes with other processes
/// (`runtime/user_sync.rs`).
pub(crate) struct UserSync {
    /// This runtime's name on the changes it publishes.
    pub(crate) origin: String,
    /// Set once the runtime listens for other runtimes' changes.
    pub(crate) listening: tokio::sync::OnceCell<()>,
}

impl UserSync {
    pub(crate) fn new() -> Self {
        UserSync { origin: crate::ids::new_id("runtime"), listening: tokio::sync::OnceCell::new() }
    }
}
