//! What the handlers share: the runtime, the authenticator, the limits, the threads this
//! server has handed out (each with its event log and the task that fills it) and the users'
//! event logs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use axum::extract::FromRef;
use hooks_runtime::store::{MessageStore, ThreadRecord};
use hooks_runtime::{Runtime, RuntimeError, Thread};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::auth::Authenticator;
use crate::config::ServerConfig;
use crate::error::ApiError;
use crate::event_log::EventLog;
use crate::event_log_writer::{EventLogWriter, RemoteStatus, ServerEvent};
use crate::hook_runs::HookRuns;

/// Thread entries alive in this process, every router included; see [`open_thread_entries`].
static OPEN_ENTRIES: AtomicUsize = AtomicUsize::new(0);

/// How many thread entries (a thread's handle, event log and event log writer) this process
/// holds now, over every router. For tests of eviction; not a stable interface.
#[doc(hidden)]
pub fn open_thread_entries() -> usize {
    OPEN_ENTRIES.load(Ordering::Relaxed)
}

type Threads = Mutex<HashMap<String, Arc<ThreadEntry>>>;

/// The router's state.
#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) runtime: Runtime,
    pub(crate) auth: Arc<dyn Authenticator>,
    pub(crate) config: Arc<ServerConfig>,
    threads: Arc<Threads>,
    users: Arc<Mutex<HashMap<String, Arc<EventLog>>>>,
    /// Per user, the lock that creations take and the user's thread count once known.
    thread_counts: Arc<Mutex<HashMap<String, ThreadCount>>>,
    /// Whether the task that evicts idle threads runs (it starts with the first thread).
    evicting: Arc<AtomicBool>,
}

/// A user's number of threads, `None` until read from the store.
pub(crate) type ThreadCount = Arc<tokio::sync::Mutex<Option<usize>>>;

/// A thread this server knows: the one `Thread` handle (a second one would be a second run
/// lock over the same history), its owner and its event log.
pub(crate) struct ThreadEntry {
    pub(crate) thread: Thread,
    pub(crate) record: ThreadRecord,
    pub(crate) events: Arc<EventLog>,
    pub(crate) server_events: mpsc::UnboundedSender<ServerEvent>,
    /// The status a run of another process left, while it is the latest (see [`EventLogWriter`]).
    remote_status: RemoteStatus,
    /// Held by a run from its `run_started` to its `run_finished`, so runs of one thread and
    /// their events never interleave.
    pub(crate) run_gate: Arc<tokio::sync::Mutex<()>>,
    /// The store, when the log follows its events (see [`EventLogWriter`]).
    events_store: Option<Arc<dyn MessageStore>>,
    /// Inputs accepted and not finished, the running one included.
    queued: AtomicUsize,
    /// When a request last used the entry, for eviction.
    last_used: Mutex<Instant>,
    /// The event log writer's task, stopped with the entry.
    writer: tokio::task::AbortHandle,
    hook_runs: Option<HookRuns>,
}

impl Drop for ThreadEntry {
    fn drop(&mut self) {
        self.writer.abort();
        if let Some(runs) = &self.hook_runs {
            runs.unregister(&self.record.id, &self.server_events);
        }
        OPEN_ENTRIES.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The `Retry-After` of a `queue_full` answer, in seconds: the queue frees a place as each run
/// finishes, so a retry soon may be accepted.
pub(crate) const QUEUE_FULL_RETRY_AFTER: u32 = 1;

/// One accepted input of a thread, from its 202 until its run finished; see
/// [`ThreadEntry::take_queue_slot`].
pub(crate) struct QueueSlot(Arc<ThreadEntry>);

impl Drop for QueueSlot {
    fn drop(&mut self) {
        self.0.queued.fetch_sub(1, Ordering::AcqRel);
        self.0.touch();
    }
}

impl ThreadEntry {
    /// Counts one more accepted input, or says why not when `limit` are already waiting.
    pub(crate) fn take_queue_slot(self: &Arc<Self>, limit: usize) -> Result<QueueSlot, ApiError> {
        self.queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| (queued < limit).then_some(queued + 1))
            .map_err(|queued| {
                ApiError::new(
                    axum::http::StatusCode::TOO_MANY_REQUESTS,
                    "queue_full",
                    format!(
                        "the thread has {queued} inputs accepted and not finished; the limit is {limit} \
                         (ServerConfig::max_queued_inputs); send again once a run finishes"
                    ),
                )
                .retry_after(QUEUE_FULL_RETRY_AFTER)
            })?;
        Ok(QueueSlot(self.clone()))
    }

    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// Whether nothing uses the entry: no request or run holds it (`holders` counts the map's
    /// own reference), no stream reads its log, nothing is queued, and it was last used more than
    /// `idle` ago.
    fn evictable(entry: &Arc<Self>, idle: Duration) -> bool {
        Arc::strong_count(entry) == 1
            && entry.events.readers() == 0
            && entry.queued.load(Ordering::Acquire) == 0
            && entry.last_used.lock().unwrap_or_else(PoisonError::into_inner).elapsed() >= idle
    }

    /// Logs a server event after every runtime event already emitted (with a store that
    /// carries events: after every event the store has for the thread now), and waits until
    /// it is.
    pub(crate) async fn log_in_order(&self, event: Value) {
        let (done, logged) = oneshot::channel();
        let message = match &self.events_store {
            Some(log) => match log
                .event_log()
                .expect("kept only for a store with an event log")
                .latest_event_seq(&self.record.id)
                .await
            {
                Ok(seq) => ServerEvent::AfterSeq { event, seq, done },
                Err(error) => {
                    tracing::warn!(target: "hooks_server", thread = %self.record.id, "placing a server event among the store's: {error}");
                    ServerEvent::Ordered(event, Some(done))
                }
            },
            None => ServerEvent::Ordered(event, Some(done)),
        };
        if self.server_events.send(message).is_ok() {
            let _ = logged.await;
        }
    }

    /// The thread as JSON: the record's identity with the live status and the last event id.
    pub(crate) fn to_json(&self) -> Value {
        let remote = self.remote_status.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let status = match remote {
            Some(status) => Some(Value::Object(status)),
            None => serde_json::to_value(self.thread.status()).ok(),
        };
        thread_json(&self.record, self.thread.agent_name(), self.events.latest().to_string(), status)
    }
}

/// The authenticator, for the [`User`](crate::auth::User) extractor.
impl FromRef<AppState> for Arc<dyn Authenticator> {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}

/// The configuration, for the [`JsonBody`](crate::body::JsonBody) extractor's limits.
impl FromRef<AppState> for Arc<ServerConfig> {
    fn from_ref(state: &AppState) -> Self {
        state.config.clone()
    }
}

impl AppState {
    pub(crate) fn new(runtime: Runtime, auth: Arc<dyn Authenticator>, config: ServerConfig) -> Self {
        let state = AppState {
            runtime,
            auth,
            config: Arc::new(config),
            threads: Arc::default(),
            users: Arc::default(),
            thread_counts: Arc::default(),
            evicting: Arc::default(),
        };
        // Subscribed here, before any client can attach, so no change of another process is
        // missed once this runtime listens.
        let changes = state.runtime.subscribe_user_changes();
        tokio::spawn(crate::user_changes::forward_other_processes(changes, Arc::downgrade(&state.users)));
        // Accepted means kept: runs that a stopped process left unsettled are settled, and the
        // inputs it had accepted run, as the server starts rather than at its first request.
        let runtime = state.runtime.clone();
        tokio::spawn(async move {
            if let Err(error) = runtime.recover().await {
                tracing::error!(target: "hooks_server", "could not recover the threads a stopped process left: {error}");
            }
        });
        state
    }

    /// The creation lock and thread count of `user`.
    pub(crate) fn thread_count(&self, user: &str) -> ThreadCount {
        let mut counts = self.thread_counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts.entry(user.to_owned()).or_default().clone()
    }

    /// Starts, once, the task that drops thread entries idle for
    /// [`ServerConfig::thread_idle_eviction`]; it ends with the router.
    fn start_eviction(&self) {
        if self.evicting.swap(true, Ordering::AcqRel) {
            return;
        }
        let idle = self.config.thread_idle_eviction;
        let period = (idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(30));
        tokio::spawn(evict_idle(Arc::downgrade(&self.threads), idle, period));
    }

    /// Registers a thread just created or opened, and starts the task that logs its events.
    /// A thread registered meanwhile by another request wins, so there is one handle per id.
    pub(crate) async fn register(&self, thread: Thread, record: ThreadRecord) -> Arc<ThreadEntry> {
        if let Some(existing) = self.known(&record.id) {
            return existing;
        }
        // Followed before this server can send to the thread, so that every event of this
        // process comes back from the store after the subscription starts (see `EventLogWriter`).
        let store = self.runtime.store();
        let store_events = match store.event_log() {
            Some(log) => match log.subscribe_events(&record.id).await {
                Ok(subscription) => Some(subscription),
                Err(error) => {
                    tracing::error!(target: "hooks_server", thread = %record.id, "runs of other processes will not show: {error}");
                    None
                }
            },
            None => None,
        };
        // Read after the subscription started, so at or past where it starts.
        let start_seq = match (&store_events, store.event_log()) {
            (Some(_), Some(log)) => log.latest_event_seq(&record.id).await.unwrap_or(0),
            _ => 0,
        };
        let events_store = store_events.as_ref().map(|_| store.clone());
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = threads.get(&record.id) {
            return existing.clone();
        }
        let events = Arc::new(EventLog::new(self.config.event_retention));
        let (server_events, server_rx) = mpsc::unbounded_channel();
        if let Some(runs) = &self.config.hook_runs {
            runs.register(&record.id, server_events.clone());
        }
        self.start_eviction();
        let remote_status = RemoteStatus::default();
        // Subscribed before anyone can send to the thread: no event of a run is missed.
        let writer = EventLogWriter {
            thread_id: record.id.clone(),
            runtime_events: thread.subscribe_unbounded(),
            server_events: server_rx,
            store_events,
            start_seq,
            log: events.clone(),
            remote_status: remote_status.clone(),
            _running: crate::event_log_writer::Running::start(),
        };
        let writer = tokio::spawn(writer.run()).abort_handle();
        OPEN_ENTRIES.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(ThreadEntry {
            thread,
            record,
            events,
            server_events,
            remote_status,
            run_gate: Arc::default(),
            events_store,
            queued: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            writer,
            hook_runs: self.config.hook_runs.clone(),
        });
        threads.insert(entry.record.id.clone(), entry.clone());
        entry
    }

    fn known(&self, id: &str) -> Option<Arc<ThreadEntry>> {
        let entry = self.threads.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned();
        if let Some(entry) = &entry {
            entry.touch();
        }
        entry
    }

    /// The thread `id` if `user` owns it; a thread of another user is not found, exactly like
    /// one that does not exist, and after the same work: only the owner's thread in memory is
    /// answered without reading the store, so how long a 404 takes does not tell whether the
    /// id exists.
    pub(crate) async fn thread_of(&self, user: &str, id: &str) -> Result<Arc<ThreadEntry>, ApiError> {
        if let Some(entry) = self.known(id).filter(|entry| entry.record.user_id.as_deref() == Some(user)) {
            return Ok(entry);
        }
        // A thread created before this server started, or by another process on the same store;
        // or no thread of this user, in memory or not: one store read, as for an unknown id.
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

    /// A page of the threads of `user` in the store, oldest first, and the next page's cursor:
    /// also those created before this server started or by another process. A thread this
    /// server serves shows its live status and last event id; any other, its stored status and
    /// `lastEventId` 0 (its log here starts when it is first read).
    pub(crate) async fn threads_of(
        &self,
        user: &str,
        page: &crate::paging::PageQuery,
    ) -> Result<(Vec<Value>, Option<String>), ApiError> {
        let records = self.runtime.store().threads_of_user(user).await.map_err(|error| ApiError::store(&error))?;
        let (records, next) = page.select(records);
        let threads = records
            .into_iter()
            .map(|record| match self.threads.lock().unwrap_or_else(PoisonError::into_inner).get(&record.id) {
                // Listing is not using: it keeps no thread from eviction.
                Some(entry) => entry.to_json(),
                None => stored_thread_json(&record),
            })
            .collect();
        Ok((threads, next))
    }

    /// The event log of `user`, created on first use.
    pub(crate) fn user_log(&self, user: &str) -> Arc<EventLog> {
        let mut users = self.users.lock().unwrap_or_else(PoisonError::into_inner);
        users.entry(user.to_owned()).or_insert_with(|| Arc::new(EventLog::new(self.config.event_retention))).clone()
    }
}

/// Drops, every `period`, the entries unused for `idle` (see [`ThreadEntry::evictable`]) until
/// the router is gone.
async fn evict_idle(threads: Weak<Threads>, idle: Duration, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        let Some(threads) = threads.upgrade() else { return };
        let mut evicted = Vec::new();
        threads.lock().unwrap_or_else(PoisonError::into_inner).retain(|_, entry| {
            // Under the map's lock nobody can take a new reference, so a count of one stays one.
            if ThreadEntry::evictable(entry, idle) {
                evicted.push(entry.clone());
                false
            } else {
                true
            }
        });
        // Dropped outside the lock: dropping stops their event log writers.
        drop(evicted);
    }
}

/// A thread this server has not opened, as the store has it, in the shape of
/// [`ThreadEntry::to_json`].
fn stored_thread_json(record: &ThreadRecord) -> Value {
    thread_json(record, &record.agent, "0".to_owned(), serde_json::to_value(&record.status).ok())
}

/// The one shape of a thread in the API: the record's identity, the agent that has it now, the
/// last event id, and the fields of its status (when `status` is an object).
fn thread_json(record: &ThreadRecord, agent: &str, last_event_id: String, status: Option<Value>) -> Value {
    let mut value = json!({
        "id": record.id,
        "agent": agent,
        "userId": record.user_id,
        "createdAt": record.created_at,
        "arguments": record.arguments,
        "lastEventId": last_event_id,
    });
    if let (Value::Object(map), Some(Value::Object(status))) = (&mut value, status) {
        map.extend(status);
    }
    value
}
