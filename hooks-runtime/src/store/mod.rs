//! Where threads and their messages persist: the [`MessageStore`] trait and its three stores.
//!
//! | store | feature | for |
//! |---|---|---|
//! | [`InMemoryStore`] | always | tests and examples; the runtime's default; gone with the process |
//! | `SqliteStore` | `sqlite` (default) | one process: an embedded, bundled SQLite file (`SqliteStore::open(path)`) |
//! | `PostgresStore` | `postgres` | many processes sharing one database (`PostgresStore::connect(url)`), tables in the schema `agent_hooks` by default |
//!
//! Give one to [`RuntimeBuilder::store`](crate::RuntimeBuilder::store); every store passes the
//! same store suite.

mod error;
mod events;
mod inbox;
mod memory;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use error::{StoreError, StoreErrorKind};
pub use events::{EventSubscription, StoredEvent};
pub use inbox::InboxEntry;
pub use memory::InMemoryStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{DEFAULT_SCHEMA, PostgresOptions, PostgresStore};
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;

use std::fmt;

use hooks_core::{HookMessage, MessageUpdate};
use serde::{Deserialize, Serialize};

use crate::approvals::{ApprovalState, ParkedToolCall, ToolCallChange};
pub use crate::events::ThreadStatus;
pub use crate::reasons::{FailReason, StopReason};

/// A persisted thread: identity, status and thread values.
///
/// ```
/// use hooks_runtime::store::{ThreadRecord, ThreadStatus};
///
/// let mut thread = ThreadRecord::new("t1", "support", 1_700_000_000_000);
/// thread.user_id = Some("alice".into());
/// assert_eq!(thread.status, ThreadStatus::Idle);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThreadRecord {
    /// The thread id.
    pub id: String,
    /// The agent that owns the thread.
    pub agent: String,
    /// The associated user.
    pub user_id: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Invocation arguments.
    pub arguments: serde_json::Map<String, serde_json::Value>,
    /// The thread's status.
    pub status: ThreadStatus,
    /// The thread values (`set_value`), kept with the thread (M11).
    #[serde(default)]
    pub values: serde_json::Map<String, serde_json::Value>,
}

impl ThreadRecord {
    /// Thread `id` of `agent`, created at `created_at` (milliseconds since the Unix epoch):
    /// `idle`, with no user, arguments or values until they are set.
    pub fn new(id: impl Into<String>, agent: impl Into<String>, created_at: i64) -> Self {
        ThreadRecord {
            id: id.into(),
            agent: agent.into(),
            user_id: None,
            created_at,
            arguments: serde_json::Map::new(),
            status: ThreadStatus::Idle,
            values: serde_json::Map::new(),
        }
    }
}

/// Persists threads, their values and messages, and user values. Each call is atomic: an insert
/// either stores the whole message or nothing, and a value is written in the same transaction that checks its
/// thread.
///
/// ```
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// let store = InMemoryStore::new();
/// # let _: &dyn MessageStore = &store;
/// ```
#[async_trait::async_trait]
pub trait MessageStore: Send + Sync + 'static {
    /// Stores a new thread.
    async fn create_thread(&self, thread: &ThreadRecord) -> Result<(), StoreError>;
    /// A stored thread, if there is one with this id.
    async fn load_thread(&self, thread_id: &str) -> Result<Option<ThreadRecord>, StoreError>;
    /// Sets thread value `key` (M11), atomically: a thread value is kept with its thread and is
    /// in [`MessageStore::load_thread`]'s record afterwards. Fails for an unknown thread.
    async fn set_value(&self, thread_id: &str, key: &str, value: &serde_json::Value) -> Result<(), StoreError>;
    /// Sets a thread's status.
    async fn set_status(&self, thread_id: &str, status: &ThreadStatus) -> Result<(), StoreError>;
    /// Inserts a message (its id and `created_at` already set) and returns it as stored.
    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<HookMessage, StoreError>;
    /// Applies an update to a message and returns the message as stored after it.
    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError>;
    /// Every message of a thread, oldest first, silent ones included.
    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError>;
    /// Every thread of `user_id`, with its values, oldest first (by `created_at`, then id):
    /// what a server lists for a user, also after a restart or when another process created
    /// the threads.
    async fn threads_of_user(&self, user_id: &str) -> Result<Vec<ThreadRecord>, StoreError>;

    /// Every value of user `user_id` (U1), ordered by key; empty for a user with none. User
    /// values are kept in the store like thread values: they survive a restart, and every
    /// process on a shared store reads the same ones.
    async fn user_values(&self, user_id: &str) -> Result<Vec<UserValue>, StoreError>;

    /// Sets user value `key` of `user_id` to `value` (`None` removes it) and returns the value
    /// it replaced, in one atomic step: of concurrent calls for one key, from any process, each
    /// returns the value the one before it left, so every change is reported exactly once.
    async fn set_user_value(
        &self,
        user_id: &str,
        key: &str,
        value: Option<&serde_json::Value>,
    ) -> Result<Option<serde_json::Value>, StoreError>;

    /// Commits `entry` to the thread's inbox, after the inputs already there: once this returns
    /// `Ok`, the input survives a crash of this process until a run takes it
    /// ([`take_input`](MessageStore::take_input)). Fails for an unknown thread.
    ///
    /// The default refuses: a store that keeps no inbox cannot accept an input for later (the
    /// runtime's `send`, which stores the message in its run, still works on it).
    async fn enqueue_input(&self, thread_id: &str, entry: &InboxEntry) -> Result<(), StoreError> {
        let _ = entry;
        Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "enqueue_input: thread `{thread_id}`: this store keeps no inbox, so it cannot accept a message for a later run; implement MessageStore::enqueue_input, pending_inputs and take_input, or use Thread::send"
            ),
        ))
    }

    /// The thread's inbox, oldest first. The default (a store without an inbox) has none.
    async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<InboxEntry>, StoreError> {
        let _ = thread_id;
        Ok(Vec::new())
    }

    /// Inbox entry `input_id` of the thread, while it is still there. The default looks it up in
    /// [`pending_inputs`](MessageStore::pending_inputs); a store that can read one entry alone
    /// does, so a run of one input does not read the whole inbox.
    async fn pending_input(&self, thread_id: &str, input_id: &str) -> Result<Option<InboxEntry>, StoreError> {
        Ok(self.pending_inputs(thread_id).await?.into_iter().find(|entry| entry.id == input_id))
    }

    /// Removes inbox entry `input_id` and, in the same transaction, inserts `message` (the entry's
    /// message as the hooks left it; `None` when a hook prevented it). `Ok(false)` when the entry
    /// is no longer there (another run took it): then nothing is inserted, so a message is never
    /// stored twice.
    async fn take_input(
        &self,
        thread_id: &str,
        input_id: &str,
        message: Option<&HookMessage>,
    ) -> Result<bool, StoreError> {
        let _ = (message, input_id);
        Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "take_input: thread `{thread_id}`: this store keeps no inbox; implement MessageStore::enqueue_input, \
             pending_inputs and take_input together"
            ),
        ))
    }

    /// [`take_input`](MessageStore::take_input) for a run that is going: the thread's status is
    /// set to `running` with the take, so the run that takes an input needs no write of its own
    /// to say it runs. A crash after it leaves the thread `running` with the message
    /// stored, which recovery settles; a crash before leaves the input in the inbox, which
    /// recovery runs.
    ///
    /// The default sets the status, then takes the input: two transactions, in the order that
    /// keeps the same guarantees. A store that can do both in one transaction should.
    async fn take_input_running(
        &self,
        thread_id: &str,
        input_id: &str,
        message: Option<&HookMessage>,
    ) -> Result<bool, StoreError> {
        self.set_status(thread_id, &ThreadStatus::Running).await?;
        self.take_input(thread_id, input_id, message).await
    }

    /// The threads a run may have left unsettled: status `running`, or inputs in the inbox. A
    /// store that several processes share leaves out threads that a live owner holds. The
    /// runtime's recovery settles and resumes them (`Runtime::recover`). The default has none.
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    /// How often every runtime on this store looks for threads whose owner died
    /// ([`unsettled_threads`](MessageStore::unsettled_threads)) while it runs: `Some` for a store
    /// that several processes share, `None` (the default) for a store one process owns, which
    /// recovers once, at the runtime's first use.
    fn recovery_sweep_interval(&self) -> Option<std::time::Duration> {
        None
    }

    /// Takes the right to run `thread_id` for this process, for as long as the returned
    /// [`RunHold`] lives, waiting while another process runs the thread. The runtime calls it at
    /// the start of every run, after its own per-thread lock.
    ///
    /// A store that one process owns (in memory, SQLite) holds nothing: the runtime's lock
    /// already runs one turn at a time, and this default answers `None` at once. A store that
    /// several processes share (`PostgresStore`, feature `postgres`) holds a lease, so that no two processes run
    /// turns of one thread at once.
    async fn hold_run(&self, thread_id: &str) -> Result<Option<RunHold>, StoreError> {
        let _ = thread_id;
        Ok(None)
    }

    /// Parks the calls of a step that waits for approvals (A1) with the thread, so that they
    /// survive a restart and every process sharing the store sees them (A2). Fails for an
    /// unknown thread. The default refuses: a store that keeps no approvals cannot park a call.
    async fn park_tool_calls(&self, thread_id: &str, calls: &[ParkedToolCall]) -> Result<(), StoreError> {
        let _ = calls;
        Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!(
                "park_tool_calls: thread `{thread_id}`: this store keeps no approvals; implement MessageStore::park_tool_calls, \
             parked_tool_calls, advance_tool_call and clear_parked_tool_calls together"
            ),
        ))
    }

    /// The thread's parked calls, in the step's call order. The default (a store without
    /// approvals) has none.
    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError> {
        let _ = thread_id;
        Ok(Vec::new())
    }

    /// Moves parked call `call_id` from state `from` as `change` says, in one conditional
    /// write: `Ok(true)` when it was in `from` and moved, `Ok(false)` (and nothing written) when
    /// it was not, for example because another process decided it first (A4).
    async fn advance_tool_call(
        &self,
        thread_id: &str,
        call_id: &str,
        from: ApprovalState,
        change: &ToolCallChange,
    ) -> Result<bool, StoreError> {
        let _ = (call_id, from, change);
        Err(StoreError::new(
            StoreErrorKind::Unsupported,
            format!("advance_tool_call: thread `{thread_id}`: this store keeps no approvals"),
        ))
    }

    /// Removes every parked call of the thread, once their results are stored.
    async fn clear_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError> {
        let _ = thread_id;
        Ok(())
    }

    /// Whether the store carries thread events to other processes: when it does, the runtime
    /// hands every event of every thread to [`MessageStore::publish_event`], in order, besides
    /// its in-process subscribers. A store that one process owns does not (the default).
    fn publishes_events(&self) -> bool {
        false
    }

    /// Makes one thread event visible to every process on the store. Called once per event, in
    /// the order of the thread's events, from a task of the runtime's (never on the path of the
    /// run that emitted it). The default publishes nothing.
    async fn publish_event(&self, thread_id: &str, event: &crate::events::ThreadEvent) -> Result<(), StoreError> {
        let _ = (thread_id, event);
        Ok(())
    }

    /// Follows the events that every process publishes for `thread_id` (this one's included,
    /// in the order [`MessageStore::publish_event`] stored them), starting with the first one
    /// published after this call: a process that serves clients sees the runs of the others.
    /// `None` from a store that carries no events between processes (the default).
    async fn subscribe_events(&self, thread_id: &str) -> Result<Option<EventSubscription>, StoreError> {
        let _ = thread_id;
        Ok(None)
    }

    /// The `seq` ([`StoredEvent::seq`]) of the thread's last event in the store, 0 before the
    /// first: a follower of [`MessageStore::subscribe_events`] that has delivered up to it has
    /// seen every event published before this call. 0 from a store that carries no events (the
    /// default).
    async fn latest_event_seq(&self, thread_id: &str) -> Result<u64, StoreError> {
        let _ = thread_id;
        Ok(0)
    }

    /// Makes a user change visible to every process on the store, in the order changes are
    /// published; the runtime calls it for every `set_user_value` and every thread created for
    /// a user when [`publishes_events`](MessageStore::publishes_events). The default publishes
    /// nothing.
    async fn publish_user_change(&self, change: &UserChange) -> Result<(), StoreError> {
        let _ = change;
        Ok(())
    }

    /// Every user change published from now on, by any process (this one included), in
    /// the order they were published; `None` when the store does not carry them (the default).
    /// Listening has begun when this returns, so a change published afterwards is delivered.
    /// Dropping the receiver stops the delivery.
    async fn user_changes(&self) -> Result<Option<tokio::sync::mpsc::Receiver<UserChange>>, StoreError> {
        Ok(None)
    }
}

/// One stored user value ([`MessageStore::user_values`]).
///
/// ```
/// use hooks_runtime::store::UserValue;
///
/// let value = UserValue::new("theme", serde_json::json!("dark"), 1_700_000_000_000);
/// assert_eq!(value.key, "theme");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserValue {
    /// The key.
    pub key: String,
    /// The value.
    pub value: serde_json::Value,
    /// When it was last set, milliseconds since the Unix epoch.
    pub updated_at: i64,
}

impl UserValue {
    /// Value `value` of `key`, last set at `updated_at` (milliseconds since the Unix epoch).
    pub fn new(key: impl Into<String>, value: serde_json::Value, updated_at: i64) -> Self {
        UserValue { key: key.into(), value, updated_at }
    }
}

/// Something that happened to a user, on its way between processes
/// ([`MessageStore::publish_user_change`]): a user value change or a new thread of the user.
///
/// ```
/// use hooks_runtime::store::{UserChange, UserChangeKind};
///
/// let kind = UserChangeKind::ValueChanged { key: "theme".into(), old: None, new: Some(serde_json::json!("dark")) };
/// let change = UserChange::new("runtime_a", "alice", kind);
/// assert_eq!(change.key(), Some("theme"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserChange {
    /// The runtime that made the change, so that it skips its own (each runtime has its own).
    pub origin: String,
    /// The user.
    pub user_id: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: UserChangeKind,
}

impl UserChange {
    /// `kind` happened to `user_id`, made by runtime `origin`.
    pub fn new(origin: impl Into<String>, user_id: impl Into<String>, kind: UserChangeKind) -> Self {
        UserChange { origin: origin.into(), user_id: user_id.into(), kind }
    }

    /// The user value's key, for a value change.
    pub fn key(&self) -> Option<&str> {
        match &self.kind {
            UserChangeKind::ValueChanged { key, .. } => Some(key),
            UserChangeKind::ThreadCreated { .. } => None,
        }
    }
}

/// What a [`UserChange`] carries; its JSON names it in `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserChangeKind {
    /// A user value was set or removed.
    ValueChanged {
        /// The user value's key.
        key: String,
        /// The value before, as the store had it when the change was made.
        old: Option<serde_json::Value>,
        /// The value after; `None` removed it.
        new: Option<serde_json::Value>,
    },
    /// A thread of the user was created.
    ThreadCreated {
        /// The new thread's id.
        thread_id: String,
        /// Its agent.
        agent: String,
    },
}

/// The right to run one thread, from [`MessageStore::hold_run`]. The runtime gives it back with
/// [`RunHold::release`] when the run ends; one dropped instead (the run's future was dropped)
/// is given back from a spawned task.
///
/// A hold of a store that several processes share can be lost while the run goes on (its lease
/// expired, or another process took the thread over): [`RunHold::lost`] then returns, the runtime
/// stops the run at its next step, and the store refuses the run's further writes.
pub struct RunHold {
    /// In a mutex only so that the hold is `Sync` (a run borrows it across awaits).
    release: std::sync::Mutex<Option<BoxedReleaseFn>>,
    lost: Option<tokio::sync::watch::Receiver<bool>>,
    took_over_a_dead_run: bool,
}

type BoxedRelease = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;
type BoxedReleaseFn = Box<dyn FnOnce() -> BoxedRelease + Send>;

impl RunHold {
    /// A hold that `release` gives back (releasing a lease, unlocking a row), and that is never
    /// lost.
    pub fn new<F, Fut>(release: F) -> Self
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let release: BoxedReleaseFn = Box::new(move || Box::pin(release()));
        RunHold { release: std::sync::Mutex::new(Some(release)), lost: None, took_over_a_dead_run: false }
    }

    /// The same hold, taken over from an owner that died mid-run (the store already marked the
    /// thread `failed (owner_lost)`): the runtime first answers the dead run's open tool calls
    /// and announces the status, as its recovery would.
    pub fn after_a_dead_run(mut self, took_over: bool) -> Self {
        self.took_over_a_dead_run = took_over;
        self
    }

    /// Whether this hold was taken over from an owner that died mid-run.
    pub fn took_over_a_dead_run(&self) -> bool {
        self.took_over_a_dead_run
    }

    /// The same hold, lost once `lost` turns `true`.
    pub fn losable(mut self, lost: tokio::sync::watch::Receiver<bool>) -> Self {
        self.lost = Some(lost);
        self
    }

    /// Whether the hold is lost: the run must stop, and nothing more it writes is stored.
    pub fn is_lost(&self) -> bool {
        self.lost.as_ref().is_some_and(|lost| *lost.borrow())
    }

    /// Waits until the hold is lost; forever for a hold that cannot be.
    pub async fn lost(&self) {
        match self.lost.clone() {
            // An error means the sender is gone, which happens once the hold is released.
            Some(mut lost) => {
                if lost.wait_for(|lost| *lost).await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending().await,
        }
    }

    /// Gives the thread back, so the next run (of any process) can start at once.
    pub async fn release(self) {
        if let Some(release) = self.take_release() {
            release().await;
        }
    }
}

impl RunHold {
    fn take_release(&self) -> Option<BoxedReleaseFn> {
        self.release.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take()
    }
}

impl Drop for RunHold {
    fn drop(&mut self) {
        if let Some(release) = self.take_release()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(release());
        }
    }
}

impl fmt::Debug for RunHold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RunHold(..)")
    }
}
