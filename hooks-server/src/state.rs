//! What the handlers share: the runtime, the authenticator, the limits, the threads this
//! server has handed out (each a [`ThreadEntry`]) and the users' event logs.
//!
//! Building the state starts nothing. Its background tasks start with the router's first
//! request ([`AppState::start_background_tasks`]): the follower of other processes' user
//! changes and a recovery of the runs a stopped process left (with the runtime's sweeper, on a
//! store shared by processes); the eviction of idle threads starts with the first thread served.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use axum::extract::FromRef;
use hooks_runtime::store::ThreadRecord;
use hooks_runtime::{Runtime, RuntimeError, Thread};

use crate::auth::Authenticator;
use crate::config::ServerConfig;
use crate::dto::threads::ThreadView;
use crate::error::ApiError;
use crate::event_log::EventLog;
use crate::thread_entry::{ThreadEntry, ThreadEvents};

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
    /// Set once the background tasks started (at the first request).
    started: Arc<OnceLock<()>>,
    /// Whether the task that evicts idle threads runs (it starts with the first thread).
    evicting: Arc<AtomicBool>,
}

/// A user's number of threads, `None` until read from the store.
pub(crate) type ThreadCount = Arc<tokio::sync::Mutex<Option<usize>>>;

/// A thread of a listing: one this server serves, with its live status and last event id, or
/// one only the store has.
pub(crate) enum Listed {
    Served(Arc<ThreadEntry>),
    Stored(ThreadRecord),
}

impl Listed {
    pub(crate) fn view(&self) -> ThreadView<'_> {
        match self {
            Listed::Served(entry) => entry.view(),
            // Not opened here: its log here starts when it is first read.
            Listed::Stored(record) => {
                ThreadView::new(record, &record.agent, 0, serde_json::to_value(&record.status).ok())
            }
        }
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
    /// The state of a router; starts nothing (see [`AppState::start_background_tasks`]).
    pub(crate) fn new(runtime: Runtime, auth: Arc<dyn Authenticator>, config: ServerConfig) -> Self {
        AppState {
            runtime,
            auth,
            config: Arc::new(config),
            threads: Arc::default(),
            users: Arc::default(),
            thread_counts: Arc::default(),
            started: Arc::default(),
            evicting: Arc::default(),
        }
    }

    /// Starts, once, the tasks that run beside the requests; the router's first request calls
    /// it, before its handler runs. Each task ends once the router is gone (or the runtime).
    ///
    /// - The follower of other processes' user changes (value changes, new threads) into the
    ///   users' event logs. The runtime follows them from its first attached client on, which
    ///   is a request's doing, so none is missed by starting here.
    /// - A recovery of the runs a stopped process left unsettled, and of the inputs it had
    ///   accepted ([`Runtime::recover`], which also starts the runtime's recovery sweeper on a
    ///   store that processes share). The runtime recovers at its first use anyway; this makes
    ///   a request that opens no thread (a user stream, a value) start it too. An application
    ///   that wants it before any request calls [`Runtime::recover`] itself.
    pub(crate) fn start_background_tasks(&self) {
        if self.started.set(()).is_err() {
            return;
        }
        let changes = self.runtime.subscribe_user_changes();
        tokio::spawn(crate::user_changes::forward_other_processes(changes, Arc::downgrade(&self.users)));
        let runtime = self.runtime.clone();
        tokio::spawn(async move {
            if let Err(error) = runtime.recover().await {
                tracing::error!(target: "hooks_server", "could not recover the threads a stopped process left: {error}");
            }
        });
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
        let store = store_events.map(|subscription| (subscription, start_seq, store.clone()));
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = threads.get(&record.id) {
            return existing.clone();
        }
        self.start_eviction();
        let events = ThreadEvents::start(&thread, self.config.event_retention, store, self.config.hook_runs.clone());
        let entry = Arc::new(ThreadEntry::new(thread, record, events));
        threads.insert(entry.record.id.clone(), entry.clone());
        entry
    }

    fn known(&self, id: &str) -> Option<Arc<ThreadEntry>> {
        let entry = self.threads.lock().unwrap_or_else(PoisonError::into_inner).get(id).cloned();
        if let Some(entry) = &entry {
            entry.idle.touch();
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
    ) -> Result<(Vec<Listed>, Option<String>), ApiError> {
        let records = self.runtime.store().threads_of_user(user).await.map_err(|error| ApiError::store(&error))?;
        let (records, next) = page.select(records);
        let threads = records
            .into_iter()
            .map(|record| match self.threads.lock().unwrap_or_else(PoisonError::into_inner).get(&record.id) {
                // Listing is not using: the idle clock is not touched.
                Some(entry) => Listed::Served(entry.clone()),
                None => Listed::Stored(record),
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
