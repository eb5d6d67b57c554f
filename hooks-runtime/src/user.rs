//! User scope (U1): clients attaching and detaching, user values, and the user-scope hooks that
//! run for every linked hook of their kind.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use hooks_core::{ExtraFields, HookExecutionContext, HookKind, Registry, ResolvedHook, UserEvent, UserState};
use serde_json::Value;

use crate::dispatch;
use crate::runtime::Runtime;

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
    pub(crate) sync: crate::user_sync::UserSync,
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
            sync: crate::user_sync::UserSync::new(),
        }
    }

    /// Applies a change and returns the user's state after it.
    fn change(&self, user_id: &str, event: UserEvent, apply: impl FnOnce(&mut UserData)) -> UserState {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        let data = users.entry(user_id.to_owned()).or_default();
        apply(data);
        UserState { user_id: user_id.to_owned(), values: data.values.clone(), clients: data.clients.clone(), event }
    }
}

impl UserScope {
    /// A change another runtime made (scale-out): applied to this runtime's copy of the user's
    /// values; the `user_value_changed` hooks run only if a client of the user is attached here.
    pub(crate) async fn apply_remote(&self, hook_timeout: std::time::Duration, change: crate::store::UserChange) {
        let crate::store::UserChange { user_id, key, old, new, .. } = change;
        let event = UserEvent::ValueChanged { key: key.clone(), old, new: new.clone() };
        let state = self.change(&user_id, event, |data| match new {
            Some(value) => {
                data.values.insert(key, value);
            }
            None => {
                data.values.remove(&key);
            }
        });
        if !state.clients.is_empty() {
            dispatch::user_event(&self.value_changed, hook_timeout, &state).await;
        }
    }
}

impl Runtime {
    /// A client connected to the user's event stream: runs every `user_client_attached` hook.
    pub async fn attach_client(&self, user_id: &str, client_id: &str) {
        crate::user_sync::listen(&self.inner).await;
        let users = &self.inner.users;
        let event = UserEvent::ClientAttached { client_id: client_id.to_owned() };
        let state = users.change(user_id, event, |data| data.clients.push(client_id.to_owned()));
        dispatch::user_event(&users.attached, self.inner.hook_timeout, &state).await;
    }

    /// A client disconnected: runs every `user_client_detached` hook.
    pub async fn detach_client(&self, user_id: &str, client_id: &str) {
        let users = &self.inner.users;
        let event = UserEvent::ClientDetached { client_id: client_id.to_owned() };
        let state = users.change(user_id, event, |data| data.clients.retain(|client| client != client_id));
        dispatch::user_event(&users.detached, self.inner.hook_timeout, &state).await;
    }

    /// Sets (or, with `None`, removes) a user value: runs every `user_value_changed` hook.
    /// On a store that several processes share (`PostgresStore`) the change also reaches every
    /// other runtime, which runs the hooks once if a client of the user is attached to it.
    pub async fn set_user_value(&self, user_id: &str, key: &str, value: Option<Value>) {
        let users = &self.inner.users;
        let old = users
            .users
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(user_id)
            .and_then(|data| data.values.get(key).cloned());
        let event = UserEvent::ValueChanged { key: key.to_owned(), old, new: value.clone() };
        crate::user_sync::publish(&self.inner, user_id, &event).await;
        let state = users.change(user_id, event, |data| match value {
            Some(value) => {
                data.values.insert(key.to_owned(), value);
            }
            None => {
                data.values.remove(key);
            }
        });
        dispatch::user_event(&users.value_changed, self.inner.hook_timeout, &state).await;
    }

    /// A user value.
    pub fn user_value(&self, user_id: &str, key: &str) -> Option<Value> {
        let users = self.inner.users.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.get(user_id).and_then(|data| data.values.get(key).cloned())
    }
}
