//! The state a thread's handles, its runs and its hooks share, behind methods: the pipelines
//! never reach into its locks.
//!
//! The state is split by job into the types it holds: `agent` ([`ActiveAgent`]), `values`
//! ([`ValueCache`]), `records` ([`HandleRecords`]), `events` ([`EventEmitter`]); the run (its
//! lock, status, abort signal and accepted inputs) is here.
//!
//! Locks, and why there are these. `records` holds the handle's in-memory records that change
//! in short steps (queues; files; child threads), `values` the value cache, and the links' `run`
//! the thread's status and abort signal, which a run sets and clears together and which every
//! handle of the thread sees; all are std mutexes, taken only inside their methods and never
//! held across `.await` or while another lock is taken, so they have no lock order. The links'
//! `turn` is taken before `run` (see `lock_run`). The agent is read on every pipeline and
//! written by a handoff. The value cache's write lock orders a value's store write with its
//! cache update. `run` is the run's `ThreadState`, held for a whole operation (a send, an
//! injection) across `.await`; a method here never takes it, except where said.
//!
//! [`ActiveAgent`]: super::active_agent::ActiveAgent
//! [`ValueCache`]: super::value_cache::ValueCache
//! [`HandleRecords`]: super::handle_records::HandleRecords
//! [`EventEmitter`]: super::event_emitter::EventEmitter

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, Weak};

use hooks_core::{AbortSignal, ThreadState};

use super::active_agent::ActiveAgent;
use super::event_emitter::EventEmitter;
use super::handle_records::HandleRecords;
use super::value_cache::ValueCache;
use crate::events::ThreadEvent;
use crate::shared::agent_entry::AgentEntry;
use crate::shared::live_threads::Links;
use crate::shared::runtime_inner::RuntimeInner;
use crate::store::{InboxEntry, ThreadRecord, ThreadStatus};

pub(crate) struct ThreadShared {
    me: Weak<ThreadShared>,
    pub(crate) id: String,
    pub(crate) runtime: Arc<RuntimeInner>,
    pub(crate) agent: ActiveAgent,
    /// The handle's records. Child threads as their shared state rather than their `Thread`
    /// handles, so that this module needs nothing of the handle's.
    pub(crate) records: HandleRecords<Arc<ThreadShared>>,
    pub(crate) values: ValueCache,
    pub(crate) events: EventEmitter,
    /// The thread's turn, status, abort signal and accepted inputs.
    links: Arc<Links>,
    run: tokio::sync::Mutex<ThreadState>,
    /// Whether this process created it as a subagent's child thread (settings hooks fire
    /// `SubagentStop` for it, and no `SessionStart`).
    subagent: AtomicBool,
}

impl ThreadShared {
    /// The shared state of a thread as stored in `record`; `state` is its run's state.
    pub(crate) fn new(
        me: Weak<ThreadShared>,
        runtime: Arc<RuntimeInner>,
        agent: Arc<AgentEntry>,
        record: ThreadRecord,
        state: ThreadState,
    ) -> Self {
        let links = Arc::new(Links::new(record.status.clone()));
        let values = ValueCache::new(record.id.clone(), runtime.store.clone(), record.values);
        let events = EventEmitter::new(record.id.clone(), runtime.store.clone(), links.clone());
        ThreadShared {
            me,
            id: record.id,
            runtime,
            agent: ActiveAgent::new(agent),
            records: HandleRecords::new(),
            values,
            events,
            links,
            run: tokio::sync::Mutex::new(state),
            subagent: AtomicBool::new(false),
        }
    }

    /// Marks it a subagent's child thread, before its first hook runs.
    pub(crate) fn mark_subagent(&self) {
        self.subagent.store(true, Ordering::Relaxed);
    }

    pub(crate) fn is_subagent(&self) -> bool {
        self.subagent.load(Ordering::Relaxed)
    }

    /// Waits for the run's state: whoever holds it runs the thread.
    pub(crate) async fn lock_run(&self) -> RunLock<'_> {
        // The thread's turn first: another handle of the same thread waits here.
        let turn = self.links.turn.lock().await;
        RunLock { state: self.run.lock().await, _turn: turn }
    }

    /// What identifies the thread among the runtime's handles: the address of its links.
    pub(crate) fn turn_key(&self) -> usize {
        Arc::as_ptr(&self.links) as usize
    }

    pub(crate) fn self_arc(&self) -> Option<Arc<ThreadShared>> {
        self.me.upgrade()
    }

    pub(crate) fn status(&self) -> ThreadStatus {
        self.links.run().status.clone()
    }

    /// A run starts: its abort signal becomes reachable and the status `running`, sent, and
    /// stored unless `store` is `false` (the run's first write stores it).
    pub(crate) async fn begin_run(&self, abort: AbortSignal, store: bool) {
        {
            let mut run = self.links.run();
            run.status = ThreadStatus::Running;
            run.abort = Some(abort);
        }
        if store {
            self.store_status(ThreadStatus::Running).await;
        } else {
            self.events.emit(ThreadEvent::Status { status: ThreadStatus::Running });
        }
    }

    /// A run ended with `status`: its abort signal goes, the status is set, stored and sent.
    pub(crate) async fn end_run(&self, status: ThreadStatus) {
        self.settle_in_memory(status.clone());
        self.store_status(status).await;
    }

    /// A run ended with `status` where nothing can be awaited (a drop): set in memory and sent;
    /// the store is the caller's to write.
    pub(crate) fn end_run_now(&self, status: ThreadStatus) {
        self.settle_in_memory(status.clone());
        self.events.emit(ThreadEvent::Status { status });
    }

    fn settle_in_memory(&self, status: ThreadStatus) {
        let mut run = self.links.run();
        run.status = status;
        run.abort = None;
    }

    /// Whether a run of the thread goes on in this process now (its abort signal is
    /// reachable): recovery leaves such a thread alone, as its `running` is true.
    pub(crate) fn runs_here(&self) -> bool {
        self.links.run().abort.is_some()
    }

    /// Writes the status already set in memory to the store, then sends it.
    async fn store_status(&self, status: ThreadStatus) {
        if let Err(error) = self.runtime.store.set_status(&self.id, &status).await {
            tracing::error!(target: "hooks_runtime::thread", thread = %self.id, "could not store the thread status: {error}");
        }
        self.events.emit(ThreadEvent::Status { status });
    }

    /// Keeps an input just committed to the inbox, so that the run that takes it need not read
    /// it back: only on a store that one process owns, where every take of the thread's inputs
    /// is a run of this runtime, which takes the thread's turn and forgets what it took
    /// ([`forget_accepted`](Self::forget_accepted)). On a shared store another process may take
    /// an input (a sweep after an expired lease), so there the run reads the inbox.
    /// Returns the entry's id.
    pub(crate) fn note_accepted(&self, entry: InboxEntry) -> String {
        let store = &self.runtime.store;
        if store.is_shared() {
            return entry.id;
        }
        let id = entry.id.clone();
        self.links.accepted.lock().unwrap_or_else(PoisonError::into_inner).insert(entry);
        id
    }

    /// The input `input` as it was accepted here, if no run of this runtime has taken it, handed
    /// to the run about to take it. Should that run end before its take, the store still has the
    /// input, and the next run reads it back from there.
    pub(crate) fn accepted_input(&self, input: &str) -> Option<InboxEntry> {
        self.links.accepted.lock().unwrap_or_else(PoisonError::into_inner).remove(input)
    }

    /// A run took `input` from the inbox (or found it taken).
    pub(crate) fn forget_accepted(&self, input: &str) {
        self.links.accepted.lock().unwrap_or_else(PoisonError::into_inner).remove(input);
    }

    /// At the start of a run that holds the thread on a store other processes share: the agent
    /// and the values as the store has them, since another process may have handed the thread
    /// off or written a value since this live state was made (O2). A failed read is logged; the
    /// run goes on with what this process knew.
    pub(crate) async fn follow_the_store(&self) {
        let record = match self.runtime.store.load_thread(&self.id).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(target: "hooks_runtime::thread", thread = %self.id, "the run goes on without reading the thread's agent and values back: {error}");
                return;
            }
        };
        if record.agent != self.agent.current().def.name {
            match self.runtime.registries.agents.get(record.agent.as_str()) {
                Some(entry) => self.agent.hand_off_to(entry.clone()),
                None => {
                    tracing::error!(target: "hooks_runtime::thread", thread = %self.id, agent = %record.agent, "another process handed the thread to an agent this runtime does not have; it runs with the agent it had")
                }
            }
        }
        self.values.reload(record.values).await;
    }

    /// Fires the running execution's abort signal, if a run is going.
    pub(crate) fn abort(&self) {
        if let Some(signal) = self.links.run().abort.as_ref() {
            signal.abort();
        }
    }
}

/// A thread's run, held: its turn lock and its state (which this derefs to).
pub(crate) struct RunLock<'a> {
    // Declared first, so dropped first: the state is free before the next turn begins.
    state: tokio::sync::MutexGuard<'a, ThreadState>,
    _turn: tokio::sync::MutexGuard<'a, ()>,
}

impl std::ops::Deref for RunLock<'_> {
    type Target = ThreadState;

    fn deref(&self) -> &ThreadState {
        &self.state
    }
}

impl std::ops::DerefMut for RunLock<'_> {
    fn deref_mut(&mut self) -> &mut ThreadState {
        &mut self.state
    }
}
