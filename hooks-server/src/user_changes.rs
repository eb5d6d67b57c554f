//! What other processes on a shared store do for users (value changes, new threads), put into
//! the event logs of this server's users.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use hooks_runtime::store::{UserChange, UserChangeKind};
use tokio::sync::broadcast;

use crate::dto::events::StreamEvent;
use crate::event_log::EventLog;

/// Puts what other processes on a shared store do for users (value changes, new threads) into
/// the event logs of this server's users, in the shapes this server's own handlers log. A user
/// without a log here has no client here, and nothing to tell. Ends with the runtime, or once
/// the server's state is gone.
pub(crate) async fn forward_other_processes(
    mut changes: broadcast::Receiver<UserChange>,
    logs: Weak<Mutex<HashMap<String, Arc<EventLog>>>>,
) {
    loop {
        let change = match changes.recv().await {
            Ok(change) => change,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::warn!(target: "hooks_server", missed, "user streams missed changes of other processes");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(logs) = logs.upgrade() else { return };
        let log = logs.lock().unwrap_or_else(PoisonError::into_inner).get(&change.user_id).cloned();
        let Some(log) = log else { continue };
        match &change.kind {
            UserChangeKind::ValueChanged { key, new, .. } => {
                log.push(&StreamEvent::ValueChanged { key: key.clone(), value: new.clone() });
            }
            UserChangeKind::ThreadCreated { thread_id, agent } => {
                log.push(&StreamEvent::ThreadCreated { thread_id: thread_id.clone(), agent: agent.clone() });
            }
            // A kind this server does not know has no event on its streams.
            _ => {}
        }
    }
}
