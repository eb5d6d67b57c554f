//! The [`MessageStore`] trait: what every store does (threads, their messages and values, user
//! values), and the capabilities a store may add, each a trait of its own that the store hands
//! out: [`InboxStore`], [`ApprovalStore`], [`RunOwnership`], [`EventLog`].

use hooks_core::{HookMessage, MessageUpdate};

use super::approval_store::ApprovalStore;
use super::error::{StoreError, StoreErrorKind};
use super::event_log::EventLog;
use super::inbox::InboxStore;
use super::remembered_store::RememberedApprovalStore;
use super::run_ownership::RunOwnership;
use super::thread_record::ThreadRecord;
use super::user_values::UserValue;
use crate::events::ThreadStatus;

/// Persists threads, their values and messages, and user values. Each call is atomic: an insert
/// either stores the whole message or nothing, and a value is written in the same transaction that checks its
/// thread.
///
/// What a store offers beyond that is said by its type: it implements a capability trait and
/// hands itself out from the matching method (`inbox`, `approvals`, `run_ownership`,
/// `event_log`), which answer `None` by default. The three stores here offer:
///
/// | capability | [`InMemoryStore`](super::InMemoryStore) | `SqliteStore` | `PostgresStore` |
/// |---|---|---|---|
/// | [`InboxStore`] | yes | yes | yes |
/// | [`ApprovalStore`] | yes | yes | yes |
/// | [`RememberedApprovalStore`] | yes | yes | yes |
/// | [`RunOwnership`] | no | on a file | yes |
/// | [`EventLog`] | no | on a file | yes |
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
    /// Inserts a message (its id and `created_at` already set), as it is: what is stored reads
    /// back equal to it, so nothing is returned (the caller has the message). A tool result
    /// (`role: tool`) for a call that already has one stored is refused as a
    /// [`Conflict`](StoreErrorKind::Conflict): a tool call has at most one result (O4).
    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<(), StoreError>;
    /// [`insert_message`](Self::insert_message) of a message its caller has no further use
    /// for: a store that keeps messages in memory keeps this one as it is, uncopied. The
    /// runtime stores the messages of its runs through this. The default inserts it by
    /// reference, so a store that writes messages out needs nothing more.
    ///
    /// ```
    /// use hooks_runtime::store::{InMemoryStore, MessageStore, ThreadRecord};
    /// use hooks_runtime::types::{HookMessage, Role};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = InMemoryStore::new();
    /// store.create_thread(&ThreadRecord::new("thr_1", "support", 1_700_000_000_000)).await.unwrap();
    /// let message = HookMessage::new("msg_1", Role::User, "Where is my order?", 1_700_000_000_000);
    /// store.insert_owned_message("thr_1", message.clone()).await.unwrap();
    /// assert_eq!(store.messages("thr_1").await.unwrap(), vec![message]);
    /// # });
    /// ```
    async fn insert_owned_message(&self, thread_id: &str, message: HookMessage) -> Result<(), StoreError> {
        self.insert_message(thread_id, &message).await
    }
    /// A handoff (O2): `agent` owns the thread from now on ([`ThreadRecord::agent`] says so),
    /// written in the one transaction that inserts `message`, the handoff's message (`None`
    /// when a hook prevented it), so a crash never keeps one without the other. A thread
    /// reopened afterwards, in this process or another, continues with `agent`.
    async fn hand_off(&self, thread_id: &str, agent: &str, message: Option<&HookMessage>) -> Result<(), StoreError>;
    /// Applies an update to a message and returns the message as stored after it.
    async fn update_message(
        &self,
        thread_id: &str,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError>;
    /// Every message of a thread, oldest first, silent ones included.
    async fn messages(&self, thread_id: &str) -> Result<Vec<HookMessage>, StoreError>;

    /// Lends every message of a thread, oldest first, silent ones included (what
    /// [`messages`](Self::messages) returns), to `read`, which is called exactly once on success.
    /// A turn builds its request from this when no `filter_messages` hook needs messages of its
    /// own, so a store that keeps messages in memory lends them where they are instead of
    /// copying them. The store may hold a lock while `read` runs: `read` must not call the store.
    ///
    /// The default reads [`messages`](Self::messages) and lends that.
    ///
    /// ```
    /// use hooks_runtime::store::{InMemoryStore, MessageStore, ThreadRecord};
    /// use hooks_runtime::types::{HookMessage, Role};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let store = InMemoryStore::new();
    /// store.create_thread(&ThreadRecord::new("t1", "agent", 0)).await.unwrap();
    /// store.insert_message("t1", &HookMessage::new("m1", Role::User, "hi", 0)).await.unwrap();
    /// let mut count = 0;
    /// store.lend_messages("t1", &mut |messages| count = messages.len()).await.unwrap();
    /// assert_eq!(count, 1);
    /// # });
    /// ```
    async fn lend_messages(
        &self,
        thread_id: &str,
        read: &mut (dyn for<'m> FnMut(&'m [HookMessage]) + Send),
    ) -> Result<(), StoreError> {
        let messages = self.messages(thread_id).await?;
        read(&messages);
        Ok(())
    }

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

    /// The threads a run may have left unsettled: status `running`, inputs in the inbox, or
    /// status `awaiting_approval` with no call still pending (every call decided, the turn never
    /// resumed: O6). A store that several processes share leaves out threads that a live owner
    /// holds, and inputs that a live process accepted (O3). The runtime's recovery settles and
    /// resumes them (`Runtime::recover`), at its first use and, on a store with
    /// [`RunOwnership`], every [`RunOwnership::recovery_sweep_interval`].
    async fn unsettled_threads(&self) -> Result<Vec<String>, StoreError>;

    /// The store's inbox (M13: an accepted input survives a crash until a run takes it), or
    /// `None` for a store that keeps none: there `Thread::queue_message` is refused with
    /// [`Unsupported`](StoreErrorKind::Unsupported) and a server will not start on it;
    /// `Thread::send`, which stores its message in its run, still works.
    fn inbox(&self) -> Option<&dyn InboxStore> {
        None
    }

    /// The store's approvals (A1-A4, O7), or `None` for a store that keeps none: there a step
    /// that waits for a person fails with [`Unsupported`](StoreErrorKind::Unsupported).
    fn approvals(&self) -> Option<&dyn ApprovalStore> {
        None
    }

    /// The store's remembered approvals (A9), or `None` for a store that keeps none: there a
    /// decision that asks to remember its approval beyond the call is refused, and no ask is
    /// answered by one.
    fn remembered_approvals(&self) -> Option<&dyn RememberedApprovalStore> {
        None
    }

    /// How the store keeps one running owner per thread when several processes share it (O3),
    /// or `None` for a store that one process owns: there the runtime's own per-thread lock is
    /// all a run needs, recovery runs once at the runtime's first use, and a thread's live state
    /// is never reread from the store.
    fn run_ownership(&self) -> Option<&dyn RunOwnership> {
        None
    }

    /// The store's event log, which carries thread events and user changes to other processes
    /// (O5), or `None` for a store that carries none: there only this process's subscribers see
    /// a thread's events.
    fn event_log(&self) -> Option<&dyn EventLog> {
        None
    }
}

/// The runtime's reads of the capabilities: what a store without one answers.
impl dyn MessageStore {
    /// The inbox, or the error that `op` on `thread_id` gives on a store that keeps none.
    pub(crate) fn inbox_for(&self, op: &str, thread_id: &str) -> Result<&dyn InboxStore, StoreError> {
        self.inbox().ok_or_else(|| {
            StoreError::new(
                StoreErrorKind::Unsupported,
                format!(
                    "{op}: thread `{thread_id}`: this store keeps no inbox, so it cannot accept a message for a later run; \
                     implement InboxStore and return it from MessageStore::inbox, or use Thread::send"
                ),
            )
        })
    }

    /// The approvals, or the error that `op` on `thread_id` gives on a store that keeps none.
    pub(crate) fn approvals_for(&self, op: &str, thread_id: &str) -> Result<&dyn ApprovalStore, StoreError> {
        self.approvals().ok_or_else(|| {
            StoreError::new(
                StoreErrorKind::Unsupported,
                format!(
                    "{op}: thread `{thread_id}`: this store keeps no approvals, so no call can wait for one; \
                     implement ApprovalStore and return it from MessageStore::approvals"
                ),
            )
        })
    }

    /// The thread's inbox; empty on a store that keeps none.
    pub(crate) async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<super::InboxEntry>, StoreError> {
        match self.inbox() {
            Some(inbox) => inbox.pending_inputs(thread_id).await,
            None => Ok(Vec::new()),
        }
    }

    /// The calls of the thread's parked step; none on a store that keeps no approvals.
    pub(crate) async fn parked_tool_calls(
        &self,
        thread_id: &str,
    ) -> Result<Vec<crate::approval_records::ParkedToolCall>, StoreError> {
        match self.approvals() {
            Some(approvals) => approvals.parked_tool_calls(thread_id).await,
            None => Ok(Vec::new()),
        }
    }

    /// The ledger's entry for `call_id`; none on a store that keeps no approvals.
    pub(crate) async fn tool_call(
        &self,
        thread_id: &str,
        call_id: &str,
    ) -> Result<Option<crate::approval_records::ParkedToolCall>, StoreError> {
        match self.approvals() {
            Some(approvals) => approvals.tool_call(thread_id, call_id).await,
            None => Ok(None),
        }
    }

    /// The store's hold of `thread_id` for a run; `None` on a store that one process owns.
    pub(crate) async fn hold_run(&self, thread_id: &str) -> Result<Option<super::RunPermit>, StoreError> {
        match self.run_ownership() {
            Some(owners) => owners.hold_run(thread_id).await.map(Some),
            None => Ok(None),
        }
    }

    /// Whether other processes may change this store's threads: then a thread's live state is
    /// reread at each run, and an accepted input is read back from the inbox.
    pub(crate) fn is_shared(&self) -> bool {
        self.run_ownership().is_some() || self.event_log().is_some()
    }
}

/// What [`RuntimeBuilder::store`](crate::RuntimeBuilder::store) takes: a store, or one already
/// shared as an `Arc` (with other runtimes of the process, or kept to read from in a test).
///
/// ```
/// use std::sync::Arc;
/// use hooks_runtime::Runtime;
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// let owned = Runtime::builder().store(InMemoryStore::new()).build().unwrap();
/// let shared: Arc<dyn MessageStore> = Arc::new(InMemoryStore::new());
/// let one = Runtime::builder().store(shared.clone()).build().unwrap();
/// let two = Runtime::builder().store(shared).build().unwrap();
/// assert!(Arc::ptr_eq(one.store(), two.store()));
/// # let _ = owned;
/// ```
pub trait IntoMessageStore {
    /// The store, shared.
    fn into_message_store(self) -> std::sync::Arc<dyn MessageStore>;
}

impl<S: MessageStore> IntoMessageStore for S {
    fn into_message_store(self) -> std::sync::Arc<dyn MessageStore> {
        std::sync::Arc::new(self)
    }
}

impl<S: MessageStore> IntoMessageStore for std::sync::Arc<S> {
    fn into_message_store(self) -> std::sync::Arc<dyn MessageStore> {
        self
    }
}

impl IntoMessageStore for std::sync::Arc<dyn MessageStore> {
    fn into_message_store(self) -> std::sync::Arc<dyn MessageStore> {
        self
    }
}
