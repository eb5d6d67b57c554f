//! Scale-out of the user scope (U1 across processes): on a store that carries events to other
//! processes ([`MessageStore::event_log`](crate::store::MessageStore::event_log)),
//! every `set_user_value` is published through the store, and every runtime with a client of
//! the user attached runs its `user_value_changed` hooks for it, once per change.
//!
//! The runtime that made a change runs its hooks itself, as it always does, and skips the change
//! when the store delivers it back, so no runtime runs them twice. Every other runtime runs the
//! hooks only if one of the user's clients is attached to it (the values themselves are in the
//! store, where every runtime reads them), and hands the change to the followers of
//! [`Runtime::subscribe_user_changes`](crate::Runtime::subscribe_user_changes), with the
//! threads created for a user. A runtime listens from the first `attach_client` on.

use std::sync::{Arc, Weak};
use std::time::Duration;

use hooks_core::UserEvent;
use tokio::sync::mpsc;

use crate::shared::runtime_inner::RuntimeInner;
use crate::store::{StoreError, UserChange, UserChangeKind};

/// How often the delivery task checks whether its runtime is gone, when no change comes.
const RUNTIME_CHECK: Duration = Duration::from_secs(1);

/// Publishes a user value change made in this runtime, if the store carries changes. A failure
/// is logged: the change stands here, and other runtimes miss it.
pub(crate) async fn publish(inner: &RuntimeInner, user_id: &str, event: &UserEvent) {
    let UserEvent::ValueChanged { key, old, new } = event else { return };
    let kind = UserChangeKind::ValueChanged { key: key.clone(), old: old.clone(), new: new.clone() };
    publish_change(inner, user_id, kind).await;
}

/// Publishes a user change of any kind, if the store carries changes; a failure is logged.
pub(crate) async fn publish_change(inner: &RuntimeInner, user_id: &str, kind: UserChangeKind) {
    let Some(log) = inner.store.event_log() else { return };
    let change = UserChange { origin: inner.users.sync.origin.clone(), user_id: user_id.to_owned(), kind };
    if let Err(error) = log.publish_user_change(&change).await {
        tracing::error!(target: "hooks_runtime::user", user = %user_id, "could not publish a user change to other processes: {error}");
    }
}

/// Starts listening for other runtimes' changes, once, if the store carries them. Listening has
/// begun when this returns; a failure is logged and the next call tries again.
pub(crate) async fn listen(inner: &Arc<RuntimeInner>) {
    let Some(log) = inner.store.event_log() else { return };
    let started = inner
        .users
        .sync
        .listening
        .get_or_try_init(|| async {
            let changes = log.user_changes().await?;
            tokio::spawn(deliver(Arc::downgrade(inner), changes));
            Ok::<(), StoreError>(())
        })
        .await;
    if let Err(error) = started {
        tracing::error!(target: "hooks_runtime::user", "not listening for user value changes of other processes: {error}");
    }
}

/// Handles other runtimes' changes until this runtime is gone.
async fn deliver(runtime: Weak<RuntimeInner>, mut changes: mpsc::Receiver<UserChange>) {
    loop {
        let change = tokio::select! {
            change = changes.recv() => match change {
                Some(change) => change,
                None => return,
            },
            () = tokio::time::sleep(RUNTIME_CHECK) => {
                if runtime.strong_count() == 0 {
                    return;
                }
                continue;
            }
        };
        let Some(inner) = runtime.upgrade() else { return };
        if change.origin != inner.users.sync.origin {
            remote_change(&inner, change).await;
        }
    }
}

/// Another runtime's change: the `user_value_changed` hooks run here only if a client of the
/// user is attached here; followers get every change.
async fn remote_change(inner: &RuntimeInner, change: UserChange) {
    if let UserChangeKind::ValueChanged { key, old, new } = &change.kind {
        let users = &inner.users;
        let event = UserEvent::ValueChanged { key: key.clone(), old: old.clone(), new: new.clone() };
        if users.has_clients(&change.user_id) && users.has_hooks(&event) {
            let values = inner.user_values_for_hooks(&change.user_id).await;
            users.change_value(&change.user_id, event, values, inner.limits.hook_timeout).await;
        }
    }
    // Nobody following is no error: a runtime without a server has no followers.
    let _ = inner.users.sync.remote.send(change);
}
