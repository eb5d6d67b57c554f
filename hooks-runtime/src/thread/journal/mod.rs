//! The journal: the one door to a thread's durable writes, and the order they keep.
//!
//! Every store write of a thread goes through [`Journal`]: its creation, messages (an insert, an
//! update, the inbox take or the handoff written with one), values, accepted inputs, the
//! status, the run's hold on the thread, parked calls and their decisions, results and
//! settlement. The stages of `thread/` decide what to write; the journal writes it, tells it
//! (the event that reports a write is sent here, after the write) and keeps the rules below.
//! `event_emitter` and `publisher` carry the events (to this process's subscribers, and through
//! the store's event log to other processes); `value_cache` is the values as last written.

pub(crate) mod event_emitter;
mod publisher;
pub(crate) mod value_cache;

use std::future::Future;
use std::sync::{Arc, PoisonError};

use futures_util::future::BoxFuture;
use hooks_core::{AbortSignal, HookMessage, MessageUpdate};
use serde_json::Value;

use self::event_emitter::EventEmitter;
use self::value_cache::ValueCache;
use super::links::{Links, StatusAndAbort};
use crate::approval_records::{ApprovalDecision, ApprovalState, ParkedToolCall, ToolCallChange};
use crate::events::{ThreadEvent, ThreadStatus};
use crate::remembered_approvals::RememberedApproval;
use crate::store::{InboxEntry, InputTake, MessageStore, RunPermit, StoreError, TakeStatus, ThreadRecord};

/// Where a message comes from, which says what its insert writes with it, in one transaction.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin<'a> {
    /// The run's own message: inserted alone.
    Run,
    /// Inbox entry `input`, taken by a run: the entry leaves the inbox in the insert's
    /// transaction, or alone when a hook prevents the message (M7), and that transaction
    /// stores the run's `running` status.
    Input(&'a str),
    /// A handoff's message: the thread's agent becomes this one in the insert's transaction, or
    /// alone when a hook prevents the message (M10, O2).
    Handoff(&'static str),
}

/// What an abort found ([`Journal::abort`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AbortFound {
    /// A run goes on: its signal fired, or fires as soon as the run makes it reachable.
    Running,
    /// The thread waits for approvals: the waiting calls are the abort's to deny
    /// ([`Finish::Abort`](super::resuming::Finish::Abort)); a run that resumes the step first
    /// stops once the decided calls are carried out.
    Waiting,
    /// Nothing runs or waits: the abort changes nothing.
    Nothing,
}

/// The one owner of a thread's durable writes, shared by every handle of the thread in this
/// runtime. The rules it keeps, each in one place:
///
/// 1. **Written, then told.** An event that reports a write (`message_created`, `status`,
///    `approval_requested`, `approval_resolved`) is sent only once the write succeeded; a
///    failed write tells nothing.
/// 2. **Messages before status.** A run's status is written after the messages it stored: the
///    results of a parked step are stored, and the step settled, before the run's final status
///    ([`end_run`](Self::end_run)); an inbox take stores its message and the `running` status
///    in one transaction, a handoff its message and the agent.
/// 3. **A decision is told before anything acts on it.** A decision is one conditional write
///    (A4); it is announced under the journal's decision lock, and a run reads the decided
///    calls it carries out under that lock ([`decided_calls`](Self::decided_calls)), so no
///    `tool_call_started` or result of a call comes before its `approval_resolved`.
/// 4. **An abort that lost the decision stops only what follows it** (O7). An approval that
///    won the conditional write was told first: its call runs to its result, which is stored
///    and kept in the ledger, and the step is settled, before the abort takes effect (the run's
///    abort signal is not reachable meanwhile, see [`arm_abort`](Self::arm_abort)); then the
///    run stops `aborted` without asking the model again. An abort that won it denies the call,
///    which never runs. Either way the store, the events and the `RunOutcome` tell one story.
/// 5. **Values: the store first, then the cache**, under the cache's write lock, so that a
///    failed write changes neither and the cache ends in the order the store did (M11).
///
/// ```text
/// // Inside `thread/`: a stage decides, the journal writes and tells.
/// shared.journal.store_message(message, Origin::Run).await?;
/// shared.journal.end_run(ThreadStatus::Idle).await;
/// ```
pub(crate) struct Journal {
    thread_id: String,
    store: Arc<dyn MessageStore>,
    /// The thread's status and abort signal, and the inputs accepted here.
    links: Arc<Links>,
    events: Arc<EventEmitter>,
    values: ValueCache,
    /// Held from a decision's write to its announcement, and by a run reading the decided calls
    /// it carries out (rule 3).
    decisions: tokio::sync::Mutex<()>,
}

impl Journal {
    /// The journal of the thread `thread_id`, whose record had `values` at opening.
    pub(crate) fn new(
        thread_id: String,
        store: Arc<dyn MessageStore>,
        links: Arc<Links>,
        events: Arc<EventEmitter>,
        values: serde_json::Map<String, Value>,
    ) -> Self {
        Journal {
            thread_id,
            store,
            links,
            events,
            values: ValueCache::new(values),
            decisions: tokio::sync::Mutex::new(()),
        }
    }

    /// Stores a new thread, before any live state of it exists.
    pub(crate) async fn create_thread(store: &dyn MessageStore, record: &ThreadRecord) -> Result<(), StoreError> {
        store.create_thread(record).await
    }

    // -- Messages ---------------------------------------------------------------------------

    /// Stores `message` from `origin`, with what that origin writes in the same transaction,
    /// then tells it (`message_created`). `Ok(false)`, and nothing told, when the message came
    /// from an inbox entry that another run took first.
    ///
    /// A run's message goes to the store uncopied when no event of it goes anywhere; a
    /// subscriber that starts listening while the store writes it is told of the stored copy.
    /// Not an `async fn`: the write starts here, and the future returned holds the store's
    /// future and what the event needs, not the message (a run's futures are moved as the run
    /// starts them, see docs/performance.md).
    pub(crate) fn store_message<'a>(
        &'a self,
        message: HookMessage,
        origin: Origin<'a>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send + 'a {
        let told = self.events.goes_somewhere().then(|| Arc::new(message.clone()));
        let write = match origin {
            Origin::Run => {
                // Kept for a subscriber that starts listening while the store writes it.
                let message_id = told.is_none().then(|| message.id.clone());
                Write::Run(self.store.insert_owned_message(&self.thread_id, message), message_id)
            }
            origin => Write::Borrowed(message, origin),
        };
        async move {
            let (told, message_id) = match write {
                Write::Run(insert, message_id) => {
                    insert.await?;
                    (told, message_id)
                }
                Write::Borrowed(message, origin) => {
                    if !self.store_borrowed(&message, origin).await? {
                        return Ok(false);
                    }
                    // The message the store borrowed, told if someone listens now.
                    (told.or_else(|| self.events.goes_somewhere().then(|| Arc::new(message))), None)
                }
            };
            let message = match (told, message_id) {
                (Some(told), _) => told,
                (None, Some(message_id)) if self.events.goes_somewhere() => {
                    match self.read_messages(|messages| stored_copy(messages, &message_id)).await {
                        Ok(Some(stored)) => Arc::new(stored),
                        // Stored, and told to nobody who listened when it was written.
                        _ => return Ok(true),
                    }
                }
                _ => return Ok(true),
            };
            self.events.emit_with(|| ThreadEvent::MessageCreated {
                id: message.id.clone(),
                role: message.role,
                message,
            });
            Ok(true)
        }
    }

    /// A message written with what its origin (a handoff, an inbox take) writes in the same
    /// transaction, the store borrowing it: `false` when the inbox entry was taken by another
    /// run first. The message is borrowed, not moved in: the caller's future keeps it once.
    async fn store_borrowed(&self, message: &HookMessage, origin: Origin<'_>) -> Result<bool, StoreError> {
        let id = &self.thread_id;
        match origin {
            Origin::Run => self.store.insert_message(id, message).await?,
            Origin::Handoff(agent) => self.store.hand_off(id, agent, Some(message)).await?,
            Origin::Input(input) => {
                let inbox = self.store.inbox_for("take_input", id)?;
                let take = InputTake::new(input).with_message(message).with_status(TakeStatus::Running);
                let taken = inbox.take_input(id, &take).await?;
                self.forget_accepted(input);
                return Ok(taken);
            }
        }
        Ok(true)
    }

    /// What `origin` writes when a hook prevented its message: an inbox entry leaves the inbox
    /// (M7), and the run's `running` status is stored with it; a handoff happens all the same
    /// (M10).
    pub(crate) async fn store_prevented(&self, origin: Origin<'_>) -> Result<(), StoreError> {
        match origin {
            Origin::Run => Ok(()),
            Origin::Input(input) => {
                let inbox = self.store.inbox_for("take_input", &self.thread_id)?;
                let take = InputTake::new(input).with_status(TakeStatus::Running);
                inbox.take_input(&self.thread_id, &take).await?;
                self.forget_accepted(input);
                Ok(())
            }
            Origin::Handoff(agent) => self.store.hand_off(&self.thread_id, agent, None).await,
        }
    }

    /// An inbox entry whose message a settings `UserPromptSubmit` hook blocked leaves the inbox,
    /// as a prevented message would (M7).
    pub(crate) async fn drop_input(&self, input: &str) -> Result<(), StoreError> {
        let inbox = self.store.inbox_for("take_input", &self.thread_id)?;
        inbox.take_input(&self.thread_id, &InputTake::new(input)).await?;
        self.forget_accepted(input);
        Ok(())
    }

    /// Applies `update` to message `message_id`; the message as stored after it.
    pub(crate) async fn update_message(
        &self,
        message_id: &str,
        update: &MessageUpdate,
    ) -> Result<HookMessage, StoreError> {
        self.store.update_message(&self.thread_id, message_id, update).await
    }

    /// Every stored message, oldest first.
    pub(crate) async fn messages(&self) -> Result<Vec<HookMessage>, StoreError> {
        self.store.messages(&self.thread_id).await
    }

    /// What `read` makes of every stored message, oldest first, lent by the store
    /// ([`MessageStore::lend_messages`]): no copy where the store keeps them in memory.
    pub(crate) async fn read_messages<T: Send>(
        &self,
        read: impl FnOnce(&[HookMessage]) -> T + Send,
    ) -> Result<T, StoreError> {
        let mut read = Some(read);
        let mut out = None;
        self.store
            .lend_messages(&self.thread_id, &mut |messages| {
                if let Some(read) = read.take() {
                    out = Some(read(messages));
                }
            })
            .await?;
        out.ok_or_else(|| {
            StoreError::other(format!(
                "the store answered `lend_messages` for thread `{}` without calling `read`: a store's \
                 `lend_messages` must call it once with the messages (or leave the default, which does)",
                self.thread_id
            ))
        })
    }

    // -- Values -----------------------------------------------------------------------------

    /// M11 (rule 5): the store first, in its own transaction, then the cache; a failed write
    /// changes neither.
    pub(crate) async fn set_value(&self, key: &str, value: Value) -> Result<(), StoreError> {
        let _writing = self.values.writing().await;
        self.store.set_value(&self.thread_id, key, &value).await?;
        self.values.insert(key, value);
        Ok(())
    }

    /// A thread value as this process last wrote it, or as the store had it.
    pub(crate) fn value(&self, key: &str) -> Option<Value> {
        self.values.get(key)
    }

    /// The values as the store has them now, read back at a run's start on a shared store.
    pub(crate) async fn reload_values(&self, values: serde_json::Map<String, Value>) {
        self.values.reload(values).await;
    }

    // -- The inbox --------------------------------------------------------------------------

    /// Commits `entry` to the thread's inbox; returns its id once it is committed (M13). On a
    /// store one process owns the entry is also kept here, so that the run that takes it need
    /// not read it back: every take of the thread's inputs is then a run of this runtime,
    /// which takes the thread's turn and forgets what it took. On a shared store another
    /// process may take an input (a sweep after an expired lease), so there the run reads the
    /// inbox.
    pub(crate) async fn accept_input(&self, entry: InboxEntry) -> Result<String, StoreError> {
        self.store.inbox_for("queue_message", &self.thread_id)?.enqueue_input(&self.thread_id, &entry).await?;
        if self.store.is_shared() {
            return Ok(entry.id);
        }
        let id = entry.id.clone();
        self.links.accepted.lock().unwrap_or_else(PoisonError::into_inner).insert(entry);
        Ok(id)
    }

    /// The input `input` as it was accepted here, if no run of this runtime has taken it, handed
    /// to the run about to take it. Should that run end before its take, the store still has the
    /// input, and the next run reads it back from there.
    pub(crate) fn accepted_input(&self, input: &str) -> Option<InboxEntry> {
        self.links.accepted.lock().unwrap_or_else(PoisonError::into_inner).remove(input)
    }

    /// The thread's inbox, oldest first; empty on a store that keeps none.
    pub(crate) async fn pending_inputs(&self) -> Result<Vec<InboxEntry>, StoreError> {
        self.store.pending_inputs(&self.thread_id).await
    }

    /// Inbox entry `input`, if it is still there.
    pub(crate) async fn pending_input(&self, input: &str) -> Result<Option<InboxEntry>, StoreError> {
        self.store.inbox_for("pending_input", &self.thread_id)?.pending_input(&self.thread_id, input).await
    }

    /// A run took `input` from the inbox (or found it taken).
    fn forget_accepted(&self, input: &str) {
        self.links.accepted.lock().unwrap_or_else(PoisonError::into_inner).remove(input);
    }

    // -- The run and its status -------------------------------------------------------------

    /// The store's hold of the thread for a run (O3); `None` on a store one process owns.
    pub(crate) async fn hold_run(&self) -> Result<Option<RunPermit>, StoreError> {
        self.store.hold_run(&self.thread_id).await
    }

    /// The thread's status.
    pub(crate) fn status(&self) -> ThreadStatus {
        self.links.run().status.clone()
    }

    /// Whether a run of the thread goes on in this process now: recovery leaves such a thread
    /// alone, as its `running` is true.
    pub(crate) fn runs_here(&self) -> bool {
        self.links.run().runs_here
    }

    /// A run starts: the status becomes `running`, is stored unless `store` is `false` (the
    /// run's first write, an inbox take, stores it), and told. With `abort`, the run's signal
    /// is reachable at once ([`arm_abort`](Self::arm_abort)); without, the run makes it
    /// reachable later (rule 4).
    pub(crate) async fn begin_run(&self, abort: Option<AbortSignal>, store: bool) {
        {
            let mut run = self.links.run();
            run.status = ThreadStatus::Running;
            run.runs_here = true;
            if let Some(abort) = abort {
                arm(&mut run, abort);
            }
        }
        if store {
            self.store_status(ThreadStatus::Running).await;
        } else {
            self.events.emit(ThreadEvent::Status { status: ThreadStatus::Running });
        }
    }

    /// Makes the run's abort signal reachable to [`abort`](Self::abort); an abort that came
    /// while it was not fires it now (rule 4).
    pub(crate) fn arm_abort(&self, abort: AbortSignal) {
        arm(&mut self.links.run(), abort);
    }

    /// An abort noted while nothing ran, which found nothing to deny.
    pub(crate) fn forget_abort(&self) {
        let mut run = self.links.run();
        if !run.runs_here {
            run.abort_requested = false;
        }
    }

    /// Fires the running execution's abort signal; with none reachable, notes the abort for
    /// the run that makes one reachable. Says what it found, in one look at the status and the
    /// signal, which a run sets together.
    pub(crate) fn abort(&self) -> AbortFound {
        let mut run = self.links.run();
        if let Some(signal) = run.abort.as_ref() {
            signal.abort();
            return AbortFound::Running;
        }
        if run.runs_here {
            run.abort_requested = true;
            return AbortFound::Running;
        }
        match run.status {
            ThreadStatus::AwaitingApproval => {
                run.abort_requested = true;
                AbortFound::Waiting
            }
            _ => AbortFound::Nothing,
        }
    }

    /// A run ended with `status` (rule 2: after what it stored): its abort signal goes, the
    /// status is set, stored and told.
    pub(crate) async fn end_run(&self, status: ThreadStatus) {
        self.settle_in_memory(status.clone());
        self.store_status(status).await;
    }

    /// A run ended with `status` where nothing can be awaited (a drop): set in memory and told;
    /// [`store_settled_status`](Self::store_settled_status) writes it later.
    pub(crate) fn end_run_now(&self, status: ThreadStatus) {
        self.settle_in_memory(status.clone());
        self.events.emit(ThreadEvent::Status { status });
    }

    /// Writes a dropped run's status, unless a run since has changed it: a later run's own
    /// writes stay the last. The caller holds the thread's run.
    pub(crate) async fn store_settled_status(&self, status: &ThreadStatus) {
        if self.status() != *status {
            return;
        }
        if let Err(error) = self.store.set_status(&self.thread_id, status).await {
            tracing::error!(target: "hooks_runtime::thread", thread = %self.thread_id, "could not store the status of a dropped run: {error}");
        }
    }

    fn settle_in_memory(&self, status: ThreadStatus) {
        let mut run = self.links.run();
        run.status = status;
        run.abort = None;
        run.abort_requested = false;
        run.runs_here = false;
    }

    /// Writes the status already set in memory to the store, then tells it.
    async fn store_status(&self, status: ThreadStatus) {
        if let Err(error) = self.store.set_status(&self.thread_id, &status).await {
            tracing::error!(target: "hooks_runtime::thread", thread = %self.thread_id, "could not store the thread status: {error}");
        }
        self.events.emit(ThreadEvent::Status { status });
    }

    // -- Parked calls and their decisions ---------------------------------------------------

    /// A1: parks the step's calls with the thread, then tells each waiting one
    /// (`approval_requested`).
    pub(crate) async fn park(&self, calls: &[ParkedToolCall]) -> Result<(), StoreError> {
        self.store.approvals_for("park_tool_calls", &self.thread_id)?.park_tool_calls(&self.thread_id, calls).await?;
        for call in calls.iter().filter(|call| call.state == ApprovalState::Pending) {
            self.events.emit(ThreadEvent::ApprovalRequested {
                id: call.id.clone(),
                name: call.tool.clone(),
                reasons: call.reasons.clone(),
            });
        }
        Ok(())
    }

    /// The calls of the thread's parked step, in call order; none on a store that keeps no
    /// approvals.
    pub(crate) async fn parked_calls(&self) -> Result<Vec<ParkedToolCall>, StoreError> {
        self.store.parked_tool_calls(&self.thread_id).await
    }

    /// The parked calls as a run carries them out: read under the decision lock, so that every
    /// decision read here has been told (rule 3).
    pub(crate) async fn decided_calls(&self) -> Result<Vec<ParkedToolCall>, StoreError> {
        let _told = self.decisions.lock().await;
        self.parked_calls().await
    }

    /// The ledger's entry for `call_id` (O7); none on a store that keeps no approvals.
    pub(crate) async fn ledger(&self, call_id: &str) -> Result<Option<ParkedToolCall>, StoreError> {
        self.store.tool_call(&self.thread_id, call_id).await
    }

    /// A4: a decision on a pending call, in one conditional write; of two deciders (an abort
    /// too), in any processes, one wins. `Ok(true)` when this one won; the winner's decision is
    /// told (`approval_resolved`) before the decision lock is released (rule 3).
    pub(crate) async fn decide(&self, change: &ToolCallChange, decision: ApprovalDecision) -> Result<bool, StoreError> {
        let _telling = self.decisions.lock().await;
        if !self.advance(change, "advance_tool_call").await? {
            return Ok(false);
        }
        self.events.emit(ThreadEvent::ApprovalResolved { id: change.call_id.clone(), decision });
        Ok(true)
    }

    /// A4: an approved call is marked `running` before its tool runs; `Ok(false)` when another
    /// run took it.
    pub(crate) async fn start_call(&self, call_id: &str) -> Result<bool, StoreError> {
        let running = ToolCallChange::new(call_id, ApprovalState::Approved, ApprovalState::Running);
        self.advance(&running, "advance_tool_call").await
    }

    /// Keeps a parked call's result in the ledger (`done`), from the state it was in.
    pub(crate) async fn keep_result(&self, call_id: &str, from: ApprovalState, kept: Value) -> Result<(), StoreError> {
        let change = ToolCallChange::new(call_id, from, ApprovalState::Done).with_result(kept);
        self.advance(&change, "advance_tool_call").await.map(|_| ())
    }

    /// Settles the parked step once its results are stored (rule 2): its calls leave the
    /// parked step and stay in the ledger.
    pub(crate) async fn settle_parked(&self) -> Result<(), StoreError> {
        let approvals = self.store.approvals_for("settle_parked_tool_calls", &self.thread_id)?;
        approvals.settle_parked_tool_calls(&self.thread_id).await
    }

    /// A9: keeps an approval a person asked to remember, after the decision that made it is
    /// written (rule 2's order: what was decided first, then what follows from it). A store
    /// that keeps no remembered approvals keeps nothing (the decision checked that it does).
    pub(crate) async fn remember_approval(&self, approval: &RememberedApproval) -> Result<(), StoreError> {
        match self.store.remembered_approvals() {
            Some(kept) => kept.remember_approval(approval).await,
            None => Ok(()),
        }
    }

    async fn advance(&self, change: &ToolCallChange, op: &str) -> Result<bool, StoreError> {
        self.store.approvals_for(op, &self.thread_id)?.advance_tool_call(&self.thread_id, change).await
    }
}

/// A copy of the message `id` of a thread's history, looked for from the newest.
fn stored_copy(messages: &[HookMessage], id: &str) -> Option<HookMessage> {
    messages.iter().rev().find(|message| message.id == id).cloned()
}

/// A message's write as [`Journal::store_message`] started it.
enum Write<'a> {
    /// A run's message, handed to the store; the id of a message nobody was told of yet.
    Run(BoxFuture<'a, Result<(), StoreError>>, Option<String>),
    /// A handoff's or an inbox take's, to be written with what its origin writes.
    Borrowed(HookMessage, Origin<'a>),
}

/// [`Journal::arm_abort`] under a lock the caller holds.
fn arm(run: &mut StatusAndAbort, abort: AbortSignal) {
    if std::mem::take(&mut run.abort_requested) {
        abort.abort();
    }
    run.abort = Some(abort);
}
