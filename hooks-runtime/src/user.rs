//! User scope (U1): clients attaching and detaching, user values, and the user-scope hooks that
//! run for every linked hook of their kind.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use hooks_core::__private::ResolvedHook;
use hooks_core::{ExtraFields, HookExecutionContext, HookKind, Registry, UserEvent, UserState};

use crate::dispatch;

/// What a runtime keeps of a user in memory: only the clients connected to it. The user's
/// values live in the store, which every process on it shares, and are read from there for
/// each event; a copy kept here would go stale as soon as another process wrote one.
#[derive(Debug, Default, Clone)]
struct UserData {
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
                .map(|hook| ResolvedHook::new(hook, HookExecutionContext::agent("user scope"), None, None))
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

    /// Whether any hook of `event`'s kind is linked: when none is, nothing reads the user's
    /// values for it.
    pub(crate) fn has_hooks(&self, event: &UserEvent) -> bool {
        !self.hooks_of(event).is_empty()
    }

    fn hooks_of(&self, event: &UserEvent) -> &[ResolvedHook] {
        match event.kind() {
            HookKind::UserClientAttached => &self.attached,
            HookKind::UserClientDetached => &self.detached,
            HookKind::UserValueChanged => &self.value_changed,
            // Loud, not an empty chain: a user-scope kind added to the table needs its hooks here.
            kind => unreachable!("no user-scope hooks are kept for `{kind}`"),
        }
    }

    /// A client connected: runs every `user_client_attached` hook with the user's `values`.
    pub(crate) async fn attach_client(&self, user_id: &str, client_id: &str, values: ExtraFields, timeout: Duration) {
        let event = UserEvent::ClientAttached { client_id: client_id.to_owned() };
        let state = self.change(user_id, event, values, |data| data.clients.push(client_id.to_owned()));
        dispatch::await_point!(dispatch::user_event(&self.attached, timeout, &state));
    }

    /// A client disconnected: runs every `user_client_detached` hook with the user's `values`.
    pub(crate) async fn detach_client(&self, user_id: &str, client_id: &str, values: ExtraFields, timeout: Duration) {
        let event = UserEvent::ClientDetached { client_id: client_id.to_owned() };
        let state = self.change(user_id, event, values, |data| data.clients.retain(|client| client != client_id));
        dispatch::await_point!(dispatch::user_event(&self.detached, timeout, &state));
    }

    /// A user value change (`event` is a `ValueChanged`) already in the store, which holds
    /// `values` after it: every `user_value_changed` hook runs.
    pub(crate) async fn change_value(&self, user_id: &str, event: UserEvent, values: ExtraFields, timeout: Duration) {
        let state = self.change(user_id, event, values, |_| {});
        dispatch::await_point!(dispatch::user_event(&self.value_changed, timeout, &state));
    }

    /// Whether a client of `user_id` is connected to this runtime.
    pub(crate) fn has_clients(&self, user_id: &str) -> bool {
        let users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.get(user_id).is_some_and(|data| !data.clients.is_empty())
    }

    /// Applies a change to the user's clients and returns the user's state after it. A user
    /// without clients is forgotten, so memory follows the connected users only.
    fn change(
        &self,
        user_id: &str,
        event: UserEvent,
        values: ExtraFields,
        apply: impl FnOnce(&mut UserData),
    ) -> UserState {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        let data = users.entry(user_id.to_owned()).or_default();
        apply(data);
        let clients = data.clients.clone();
        if clients.is_empty() {
            users.remove(user_id);
        }
        UserState::new(user_id, event).with_values(values).with_clients(clients)
    }
}

/// Scale-out: a runtime's side of the exchange of user value changes with other processes
/// (`runtime/user_sync.rs`).
pub(crate) struct UserSync {
    /// This runtime's name on the changes it publishes.
    pub(crate) origin: String,
    /// Set once the runtime listens for other runtimes' changes.
    pub(crate) listening: tokio::sync::OnceCell<()>,
    /// Other runtimes' changes, for whoever serves this runtime's users (a server's user
    /// event streams).
    pub(crate) remote: tokio::sync::broadcast::Sender<crate::store::UserChange>,
}

/// How many changes of other runtimes a slow follower of [`UserSync::remote`] may fall behind.
const REMOTE_BUFFER: usize = 1024;

impl UserSync {
    pub(crate) fn new() -> Self {
        UserSync {
            origin: crate::ids::new_id("runtime"),
            listening: tokio::sync::OnceCell::new(),
            remote: tokio::sync::broadcast::Sender::new(REMOTE_BUFFER),
        }
    }
}
