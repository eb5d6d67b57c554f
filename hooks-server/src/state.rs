//! What the handlers share: the runtime, the authenticator, the limits, the threads this
//! server has handed out (each with its event log and the task that fills it) and the users'
//! event logs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use hooks_runtime::store::ThreadRecord;
use hooks_runtime::{Runtime, RuntimeError, Thread, ThreadEvent};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::auth::Authenticator;
use crate::config::ServerConfig;
use crate::error::ApiError;
use crate::event_log::EventLog;

/// The router's state.
#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) runtime: Runtime,
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) config: Arc<ServerConfig>,
    threads: Arc<Mutex<HashMap<String, Arc<ThreadEntry>>>>,
    users: Arc<Mutex<HashMap<String, Arc<EventLog>>>>,
}

/// A message to a thread's event pump from the server itself.
pub(crate) enum ServerEvent {
    /// Log this event once every runtime event before it is logged, then say so.
    Ordered(Value, Option<oneshot::Sender<()>>),
}

/// A thread this server knows: the one `Thread` handle (a second one would be a second run
/// lock over the same history), its owner and its event log.
pub(crate) struct ThreadEntry {
    pub(crate) thread: Thread,
    pub(crate) record: ThreadRecord,
    pub(crate) events: Arc<EventLog>,
    pub(crate) server_events: mpsc::UnboundedSender<ServerEvent>,
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
        if let (Value::Object(map), Ok(Value::Object(status))) =
            (&mut value, serde_json::to_value(self.thread.status()))
        {
            map.extend(status);
        }
        value
    }
}

impl AppState {
    pub(crate) fn new(runtime: Runtime, auth: Arc<dyn Authenticator>, config: ServerConfig) -> Self {
        AppState { runtime, auth, config: Arc::new(config), threads: Arc::default(), users: Arc::default() }
    }

    /// Registers a thread just created or opened, and starts the task that logs its events.
    /// A thread registered meanwhile by another request wins, so there is one handle per id.
    pub(crate) fn register(&self, thread: Thread, record: ThreadRecord) -> Arc<ThreadEntry> {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = threads.get(&record.id) {
            return existing.clone();
        }
        let events = Arc::new(EventLog::new(self.config.event_retention));
        let (server_events, server_rx) = mpsc::unbounded_channel();
        if let Some(runs) = &self.config.hook_runs {
            runs.register(&record.id, server_events.clone());
        }
        // Subscribed before anyone can send to the thread: no event of a run is missed.
        tokio::spawn(pump(thread.clone(), thread.subscribe(), server_rx, events.clone()));
        let entry = Arc::new(ThreadEntry { thread, record, events, server_events, run_gate: Arc::default() });
        threads.insert(entry.record.id.clone(), entry.clone());
        entry
    }

    /// The thread `id` if `user` owns it; a thread of another user is not found, exactly like
    /// one that does not exist.
    pub(crate) async fn thread_of(&self, user: &str, id: &str) -> Result<Arc<ThreadEntry>, ApiError> {
        let known = self.threads.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned();
        if let Some(entry) = known {
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
            Ok(thread) => Ok(self.register(thread, record)),
            Err(RuntimeError::UnknownThread(_) | RuntimeError::UnknownAgent(_)) => Err(ApiError::thread_not_found(id)),
            Err(error) => Err(ApiError::store(&error)),
        }
    }

    /// The threads of `user` this server knows, oldest first.
    pub(crate) fn threads_of(&self, user: &str) -> Vec<Arc<ThreadEntry>> {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        let mut mine: Vec<Arc<ThreadEntry>> =
            threads.values().filter(|entry| entry.record.user_id.as_deref() == Some(user)).cloned().collect();
        mine.sort_by(|a, b| (a.record.created_at, &a.record.id).cmp(&(b.record.created_at, &b.record.id)));
        mine
    }

    /// The event log of `user`, created on first use.
    pub(crate) fn user_log(&self, user: &str) -> Arc<EventLog> {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.entry(user.to_owned()).or_insert_with(|| Arc::new(EventLog::new(self.config.event_retention))).clone()
    }
}

/// Moves a thread's runtime events into its log, in the order the runtime emitted them, with
/// the server's own events (runs starting and finishing) placed after every runtime event
/// emitted before them.
async fn pump(
    thread: Thread,
    mut runtime_events: broadcast::Receiver<ThreadEvent>,
    mut server_events: mpsc::UnboundedReceiver<ServerEvent>,
    log: Arc<EventLog>,
) {
    loop {
        tokio::select! {
            // Runtime events first: an event the runtime emitted before a server event was
            // sent is already in this channel when the server event is looked at.
            biased;
            received = runtime_events.recv() => match received {
                Ok(event) => {
                    let value = thread_event_json(&thread, event).await;
                    log.push(&value);
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(target: "hooks_server", thread = %thread.id(), missed, "the event log fell behind the thread");
                    log.push(&json!({ "type": "events_lost", "count": missed }));
                }
                Err(broadcast::error::RecvError::Closed) => break,
            },
            Some(ServerEvent::Ordered(value, done)) = server_events.recv() => {
                log.push(&value);
                if let Some(done) = done {
                    let _ = done.send(());
                }
            }
            else => break,
        }
    }
}

/// A runtime event as the stream sends it; a created message comes with the message itself,
/// so a client does not need a second request to show it. The store can only list a thread's
/// messages, so this reads them all and takes the newest match: linear in the thread's length.
async fn thread_event_json(thread: &Thread, event: ThreadEvent) -> Value {
    let message_id = match &event {
        ThreadEvent::MessageCreated { id, .. } => Some(id.clone()),
        _ => None,
    };
    let mut value = serde_json::to_value(&event).unwrap_or_else(|_| json!({ "type": "unserializable_event" }));
    if let Some(id) = message_id {
        match thread.messages().await {
            Ok(messages) => {
                if let Some(message) = messages.into_iter().rev().find(|message| message.id == id) {
                    value["message"] = serde_json::to_value(message).unwrap_or(Value::Null);
                }
            }
            Err(error) => {
                tracing::warn!(target: "hooks_server", thread = %thread.id(), "could not read a created message: {error}");
            }
        }
    }
    value
}
