//! What the handlers share: the runtime, the authenticator, the limits, the threads this
//! server has handed out (each with its event log and the task that fills it) and the users'
//! event logs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use hooks_runtime::store::ThreadRecord;
use hooks_runtime::{Runtime, RuntimeError, Thread};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::auth::Authenticator;
use crate::config::ServerConfig;
use crate::error::ApiError;
use crate::event_log::EventLog;
use crate::pump::{Pump, RemoteStatus, ServerEvent};

/// The router's state.
#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) runtime: Runtime,
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) config: Arc<ServerConfig>,
    threads: Arc<Mutex<HashMap<String, Arc<ThreadEntry>>>>,
    users: Arc<Mutex<HashMap<String, Arc<EventLog>>>>,
}

/// A thread this server knows: the one `Thread` handle (a second one would be a second run
/// lock over the same history), its owner and its event log.
pub(crate) struct ThreadEntry {
    pub(crate) thread: Thread,
    pub(crate) record: ThreadRecord,
    pub(crate) events: Arc<EventLog>,
    pub(crate) server_events: mpsc::UnboundedSender<ServerEvent>,
    /// The status a run of another process left, while it is the latest (see [`Pump`]).
    remote_status: RemoteStatus,
    /// Held by a run from its `run_started` to its `run_finished`, so runs of one thread and
    /// their events never interleave.
    pub(crate) run_gate: Arc<tokio::sync::Mutex<()>>,
}

impl ThreadEntry {
    /// Logs a server event after every runtime event already emitted, and waits until it is.
    pub(crate) async fn log_in_order(&self, event: Value) {
        let (done, logged) = oneshot::channel();
        if self.server_events.send(ServerEvent::Ordered(event, Some(done))).is_ok() {
            let _ = logged.await;
        }
    }

    /// The thread as JSON: the record's identity with the live status and the last event id.
    pub(crate) fn to_json(&self) -> Value {
        let mut value = json!({
            "id": self.record.id,
            "agent": self.thread.agent_name(),
            "userId": self.record.user_id,
            "createdAt": self.record.created_at,
            "arguments": self.record.arguments,
            "lastEventId": self.events.latest().to_string(),
        });
        let remote = self.remote_status.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let status = match remote {
            Some(status) => Some(status),
            None => match serde_json::to_value(self.thread.status()) {
                Ok(Value::Object(status)) => Some(status),
                _ => None,
            },
        };
        if let (Value::Object(map), Some(status)) = (&mut value, status) {
            map.extend(status);
        }
        value
    }
}

impl AppState {
    pub(crate) fn new(runtime: Runtime, auth: Arc<dyn Authenticator>, config: ServerConfig) -> Self {
        let state =
            AppState { runtime, auth, config: Arc::new(config), threads: Arc::default(), users: Arc::default() };
        // Subscribed here, before any client can attach, so no change of another process is
        // missed once this runtime listens.
        let changes = state.runtime.subscribe_user_changes();
        tokio::spawn(crate::users::forward_other_processes(changes, Arc::downgrade(&state.users)));
        state
    }

    /// Registers a thread just created or opened, and starts the task that logs its events.
    /// A thread registered meanwhile by another request wins, so there is one handle per id.
    pub(crate) async fn register(&self, thread: Thread, record: ThreadRecord) -> Arc<ThreadEntry> {
        if let Some(existing) = self.known(&record.id) {
            return existing;
        }
        // Followed before this server can send to the thread, so that every event of this
        // process comes back from the store after the subscription starts (see `Pump`).
        let store_events = match self.runtime.store().subscribe_events(&record.id).await {
            Ok(subscription) => subscription,
            Err(error) => {
                tracing::error!(target: "hooks_server", thread = %record.id, "runs of other processes will not show: {error}");
                None
            }
        };
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = threads.get(&record.id) {
            return existing.clone();
        }
        let events = Arc::new(EventLog::new(self.config.event_retention));
        let (server_events, server_rx) = mpsc::unbounded_channel();
        if let Some(runs) = &self.config.hook_runs {
            runs.register(&record.id, server_events.clone());
        }
        let remote_status = RemoteStatus::default();
        // Subscribed before anyone can send to the thread: no event of a run is missed.
        let pump = Pump {
            thread_id: record.id.clone(),
            runtime_events: thread.subscribe(),
            server_events: server_rx,
            store_events,
            log: events.clone(),
            remote_status: remote_status.clone(),
        };
        tokio::spawn(pump.run());
        let entry =
            Arc::new(ThreadEntry { thread, record, events, server_events, remote_status, run_gate: Arc::default() });
        threads.insert(entry.record.id.clone(), entry.clone());
        entry
    }

    fn known(&self, id: &str) -> Option<Arc<ThreadEntry>> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned()
    }

    /// The thread `id` if `user` owns it; a thread of another user is not found, exactly like
    /// one that does not exist.
    pub(crate) async fn thread_of(&self, user: &str, id: &str) -> Result<Arc<ThreadEntry>, ApiError> {
        if let Some(entry) = self.known(id) {
            return if entry.record.user_id.as_deref() == Some(user) {
                Ok(entry)
            } else {
                Err(ApiError::thread_not_found(id))
            };
        }
        // A thread created before this server started, or by another process on the same store.
        let record = match self.runtime.store().load_thread(id).await {
            Ok(Some(record)) if record.user_id.as_deref() == Some(user) => record,
            Ok(_) => return Err(ApiError::thread_not_found(id)),
            Err(error) => return Err(ApiError::store(&error)),
        };
        match self.runtime.open_thread(id).await {
            Ok(thread) => Ok(self.register(thread, record).await),
            Err(RuntimeError::UnknownThread(_) | RuntimeError::UnknownAgent(_)) => Err(ApiError::thread_not_found(id)),
            Err(error) => Err(ApiError::store(&error)),
        }
    }

    /// The threads of `user` in the store, oldest first: also those created before this
    /// server started or by another process. A thread this server serves shows its live status
    /// and last event id; any other, its stored status and `lastEventId` 0 (its log here starts
    /// when it is first read).
    pub(crate) async fn threads_of(&self, user: &str) -> Result<Vec<Value>, ApiError> {
        let records = self.runtime.store().threads_of_user(user).await.map_err(|error| ApiError::store(&error))?;
        Ok(records
            .into_iter()
            .map(|record| match self.known(&record.id) {
                Some(entry) => entry.to_json(),
                None => stored_thread_json(&record),
            })
            .collect())
    }

    /// The event log of `user`, created on first use.
    pub(crate) fn user_log(&self, user: &str) -> Arc<EventLog> {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.entry(user.to_owned()).or_insert_with(|| Arc::new(EventLog::new(self.config.event_retention))).clone()
    }
}

/// A thread this server has not opened, as the store has it, in the shape of
/// [`ThreadEntry::to_json`].
fn stored_thread_json(record: &ThreadRecord) -> Value {
    let mut value = json!({
        "id": record.id,
        "agent": record.agent,
        "userId": record.user_id,
        "createdAt": record.created_at,
        "arguments": record.arguments,
        "lastEventId": "0",
    });
    if let (Value::Object(map), Ok(Value::Object(status))) = (&mut value, serde_json::to_value(&record.status)) {
        map.extend(status);
    }
    value
}
