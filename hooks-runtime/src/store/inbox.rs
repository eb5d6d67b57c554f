//! A thread's inbox: the inputs a caller was told were accepted, committed before the answer,
//! and taken by the run that stores them ([`InboxStore::take_input`]).

use hooks_core::{HookMessage, MessageRecord};

use super::StoreError;

/// One accepted input waiting in a thread's inbox: the specification's queued message, kept in
/// the store from the moment it is accepted until a run stores it (or a hook prevents it).
///
/// ```
/// use hooks_runtime::types::{MessageRecord, Role};
/// use hooks_runtime::store::InboxEntry;
///
/// let entry = InboxEntry::new(MessageRecord::new(Role::User, "hello"));
/// assert!(entry.id.starts_with("run_"));
/// assert!(entry.enqueued_at > 0);
/// ```
#[derive(Debug, PartialEq)]
#[non_exhaustive]
pub struct InboxEntry {
    /// The entry's id, which is also the id of the run that takes it (an HTTP send's `runId`).
    pub id: String,
    /// The message as it was accepted; `before_create_message` runs when a run takes it.
    pub message: MessageRecord,
    /// When it was accepted, milliseconds since the Unix epoch.
    pub enqueued_at: i64,
}

impl InboxEntry {
    /// A new entry for `message`, with a fresh id and the current time.
    pub fn new(message: MessageRecord) -> Self {
        InboxEntry::from_parts(crate::ids::new_id("run"), message, crate::ids::now_ms())
    }

    /// The entry `id` for `message`, accepted at `enqueued_at`: a store reading one back.
    ///
    /// ```
    /// use hooks_runtime::types::{MessageRecord, Role};
    /// use hooks_runtime::store::InboxEntry;
    ///
    /// let entry = InboxEntry::from_parts("run_1".into(), MessageRecord::new(Role::User, "hello"), 1_700_000_000_000);
    /// assert_eq!(entry.id, "run_1");
    /// ```
    pub fn from_parts(id: String, message: MessageRecord, enqueued_at: i64) -> Self {
        InboxEntry { id, message, enqueued_at }
    }
}

/// The entry's message as the stores keep it: JSON text.
pub(super) fn encode(entry: &InboxEntry) -> Result<String, String> {
    serde_json::to_string(&entry.message).map_err(|e| format!("encode the inbox entry `{}`: {e}", entry.id))
}

/// An entry read back; a message that does not decode is an error naming the entry, never its text.
pub(super) fn decode(id: String, message: &str, enqueued_at: i64) -> Result<InboxEntry, String> {
    match serde_json::from_str(message) {
        Ok(message) => Ok(InboxEntry { id, message, enqueued_at }),
        Err(e) => Err(format!(
            "the stored inbox entry `{id}` does not decode (invalid message JSON at line {}, column {})",
            e.line(),
            e.column()
        )),
    }
}

/// A store's inbox (M13): inputs committed before the caller is told they were accepted, and
/// taken by the run that stores them. A store that keeps one implements this trait and returns
/// itself from [`MessageStore::inbox`](super::MessageStore::inbox).
///
/// ```
/// use hooks_runtime::store::{InMemoryStore, MessageStore};
///
/// let store = InMemoryStore::new();
/// assert!(store.inbox().is_some());
/// ```
#[async_trait::async_trait]
pub trait InboxStore: Send + Sync {
    /// Commits `entry` to the thread's inbox, after the inputs already there: once this returns
    /// `Ok`, the input survives a crash of this process until a run takes it
    /// ([`take_input`](InboxStore::take_input)). Fails for an unknown thread.
    async fn enqueue_input(&self, thread_id: &str, entry: &InboxEntry) -> Result<(), StoreError>;

    /// The thread's inbox, oldest first.
    async fn pending_inputs(&self, thread_id: &str) -> Result<Vec<InboxEntry>, StoreError>;

    /// Inbox entry `input_id` of the thread, while it is still there. The default looks it up in
    /// [`pending_inputs`](InboxStore::pending_inputs); a store that can read one entry alone
    /// does, so a run of one input does not read the whole inbox.
    async fn pending_input(&self, thread_id: &str, input_id: &str) -> Result<Option<InboxEntry>, StoreError> {
        Ok(self.pending_inputs(thread_id).await?.into_iter().find(|entry| entry.id == input_id))
    }

    /// Removes inbox entry [`take.input_id`](InputTake::input_id) and, in the same transaction,
    /// inserts [`take.message`](InputTake::message) (the entry's message as the hooks left it;
    /// `None` when a hook prevented it) and sets the thread's status as
    /// [`take.status`](InputTake::status) says. `Ok(false)` when the entry is no longer there
    /// (another run took it): then nothing is inserted or set, so a message is never stored twice.
    async fn take_input(&self, thread_id: &str, take: &InputTake<'_>) -> Result<bool, StoreError>;
}

/// What [`InboxStore::take_input`] does in its one transaction: which entry it takes, the
/// message it stores in the entry's place, and what becomes of the thread's status. Built by
/// [`InputTake::new`] and the `with_*` methods, so that what a take does can grow by a field
/// without changing the method every store implements.
///
/// ```
/// use hooks_runtime::types::{HookMessage, Role};
/// use hooks_runtime::store::{InputTake, TakeStatus};
///
/// let message = HookMessage::new("m1", Role::User, "hello", 1_700_000_000_000);
/// let take = InputTake::new("run_1").with_message(&message).with_status(TakeStatus::Running);
/// assert_eq!((take.input_id, take.status), ("run_1", TakeStatus::Running));
/// assert_eq!(take.message.map(|message| message.id.as_str()), Some("m1"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct InputTake<'a> {
    /// The inbox entry taken.
    pub input_id: &'a str,
    /// The message stored with the take: the entry's message as the hooks left it; `None` when
    /// a hook prevented it.
    pub message: Option<&'a HookMessage>,
    /// What the take does to the thread's status.
    pub status: TakeStatus,
}

impl<'a> InputTake<'a> {
    /// A take of entry `input_id` that stores no message and leaves the status as it is.
    pub fn new(input_id: &'a str) -> Self {
        InputTake { input_id, message: None, status: TakeStatus::Unchanged }
    }

    /// Stores `message` with the take.
    #[must_use]
    pub fn with_message(mut self, message: &'a HookMessage) -> Self {
        self.message = Some(message);
        self
    }

    /// Sets the thread's status as `status` says, with the take.
    #[must_use]
    pub fn with_status(mut self, status: TakeStatus) -> Self {
        self.status = status;
        self
    }
}

/// What [`InboxStore::take_input`] does to the thread's status, in the take's transaction
/// ([`InputTake::with_status`]).
///
/// ```
/// use hooks_runtime::store::{InMemoryStore, InboxEntry, InputTake, MessageStore, TakeStatus, ThreadRecord};
/// use hooks_runtime::types::{MessageRecord, Role};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = InMemoryStore::new();
/// store.create_thread(&ThreadRecord::new("t1", "support", 0)).await?;
/// let inbox = store.inbox().expect("the in-memory store keeps an inbox");
/// let entry = InboxEntry::new(MessageRecord::new(Role::User, "hi"));
/// inbox.enqueue_input("t1", &entry).await?;
/// assert!(inbox.take_input("t1", &InputTake::new(&entry.id).with_status(TakeStatus::Running)).await?);
/// assert!(!inbox.take_input("t1", &InputTake::new(&entry.id)).await?, "taken once");
/// # Ok::<(), hooks_runtime::store::StoreError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TakeStatus {
    /// The status stays as it is.
    Unchanged,
    /// The status becomes `running`, for a run that is going: the run that takes an input needs
    /// no write of its own to say it runs. A crash after the take leaves the thread `running`
    /// with the message stored, which recovery settles; a crash before leaves the input in the
    /// inbox, which recovery runs.
    Running,
}
