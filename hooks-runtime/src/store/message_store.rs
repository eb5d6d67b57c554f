//! The [`MessageStore`] trait: what every store does.

use hooks_core::{HookMessage, MessageUpdate};

use super::error::{StoreError, StoreErrorKind};
use super::events::EventSubscription;
use super::inbox::InboxEntry;
use super::run_permit::RunPermit;
use super::thread_record::ThreadRecord;
use super::user_values::{UserChange, UserValue};
use crate::approvals::{ApprovalState, ParkedToolCall, ToolCallChange};
use crate::events::ThreadStatus;

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
    /// Inserts a message (its id and `created_at` already set) and returns it as stored. A tool
    /// result (`role: tool`) for a call that already has one stored is refused as a
    /// [`Conflict`](StoreErrorKind::Conflict): a tool call has at most one result (O4).
    async fn insert_message(&self, thread_id: &str, message: &HookMessage) -> Result<HookMessage, StoreError>;
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

    /// The threads a run may have left unsettled: status `running`, inputs in the inbox, or
    /// status `awaiting_approval` with no call still pending (every call decided, the turn never
    /// resumed: O6). A store that several processes share leaves out threads that a live owner
    /// holds, and inputs that a live process accepted (O3). The runtime's recovery settles and
    /// resumes them (`Runtime::recover`). The default has none.
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
    /// [`RunPermit`] lives, waiting while another process runs the thread. The runtime calls it at
    /// the start of every run, after its own per-thread lock.
    ///
    /// A store that one process owns (in memory, SQLite) holds nothing: the runtime's lock
    /// already runs one turn at a time, and this default answers `None` at once. A store that
    /// several processes share (`PostgresStore`, feature `postgres`) holds a lease, so that no two processes run
    /// turns of one thread at once.
    async fn hold_run(&self, thread_id: &str) -> Result<Option<RunPermit>, StoreError> {
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
             parked_tool_calls, tool_call, advance_tool_call and settle_parked_tool_calls together"
            ),
        ))
    }

    /// The calls of the thread's parked step (not yet [settled](MessageStore::settle_parked_tool_calls)),
    /// in the step's call order. The default (a store without approvals) has none.
    async fn parked_tool_calls(&self, thread_id: &str) -> Result<Vec<ParkedToolCall>, StoreError> {
        let _ = thread_id;
        Ok(Vec::new())
    }

    /// Parked call `call_id` of the thread, settled or not: the ledger of a decision (O7), which
    /// answers for as long as the thread lives. When a later step parked a call of the same id
    /// (a model that reuses ids), that later call. The default looks among
    /// [`parked_tool_calls`](MessageStore::parked_tool_calls), so it forgets settled calls.
    async fn tool_call(&self, thread_id: &str, call_id: &str) -> Result<Option<ParkedToolCall>, StoreError> {
        Ok(self.parked_tool_calls(thread_id).await?.into_iter().find(|call| call.id == call_id))
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

    /// Settles the thread's parked step once its results are stored: its calls leave
    /// [`parked_tool_calls`](MessageStore::parked_tool_calls) and stay readable through
    /// [`tool_call`](MessageStore::tool_call), each with its decision and result.
    async fn settle_parked_tool_calls(&self, thread_id: &str) -> Result<(), StoreError> {
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

    /// [`publish_event`](MessageStore::publish_event) for several events of one thread, in
    /// order: what the runtime's publisher found queued at once. A store that can write them in
    /// one transaction should; the default publishes them one by one.
    async fn publish_events(&self, thread_id: &str, events: &[crate::events::ThreadEvent]) -> Result<(), StoreError> {
        for event in events {
            self.publish_event(thread_id, event).await?;
        }
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

    /// The `seq` ([`StoredEvent::seq`](super::StoredEvent::seq)) of the thread's last event in the store, 0 before the
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
