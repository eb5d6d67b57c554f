//! The state a thread's handles, its runs and its hooks share, behind methods: the pipelines
//! never reach into its locks.
//!
//! The state is split by job into the types it holds: `agent` ([`ActiveAgent`]), `records`
//! ([`HandleRecords`]), `events` ([`EventEmitter`]), and `journal` ([`Journal`]), the one door
//! to the thread's durable writes (with the status, the abort signal, the accepted inputs and
//! the values as last written); the run's lock is here.
//!
//! Locks, and why there are these. `records` holds the handle's in-memory records that change
//! in short steps (queues; files; child threads), the journal's value cache the values, and the
//! links' `run` the thread's status and abort signal, which a run sets and clears together and
//! which every handle of the thread sees; all are std mutexes, taken only inside their methods
//! and never held across `.await` or while another lock is taken, so they have no lock order.
//! The links' `turn` is taken before `run` (see `lock_run`). The agent is read on every
//! pipeline and written by a handoff. The journal's own locks (a value's write, a decision's
//! announcement) are taken inside its methods only. `run` is the run's `ThreadState`, held for
//! a whole operation (a send, an injection) across `.await`; a method here never takes it,
//! except where said.
//!
//! [`ActiveAgent`]: super::active_agent::ActiveAgent
//! [`HandleRecords`]: super::handle_records::HandleRecords
//! [`EventEmitter`]: super::journal::event_emitter::EventEmitter
//! [`Journal`]: super::journal::Journal

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use hooks_core::ThreadState;

use super::active_agent::ActiveAgent;
use super::handle_records::HandleRecords;
use super::journal::Journal;
use super::journal::event_emitter::EventEmitter;
use super::links::Links;
use super::live_threads::LiveThreads;
use super::stored_calls::LastCalls;
use crate::events::ThreadStatus;
use crate::limits::Limits;
use crate::shared::agent_entry::AgentEntry;
use crate::shared::runtime_inner::RuntimeInner;
use crate::store::ThreadRecord;

pub(crate) struct ThreadShared {
    me: Weak<ThreadShared>,
    pub(crate) id: String,
    pub(crate) runtime: Arc<RuntimeInner>,
    /// The runtime's limits (a `Copy` value, fixed at build), for the stages that read them.
    pub(crate) limits: Limits,
    /// The runtime's live threads, which a subagent's child thread joins.
    pub(crate) live: Arc<LiveThreads<ThreadShared>>,
    pub(crate) agent: ActiveAgent,
    /// The handle's records. Child threads as their shared state rather than their `Thread`
    /// handles, so that this module needs nothing of the handle's.
    pub(crate) records: HandleRecords<Arc<ThreadShared>>,
    pub(crate) events: Arc<EventEmitter>,
    /// The one door to the thread's durable writes.
    pub(crate) journal: Journal,
    /// The status, abort signal, accepted inputs and event channels (the journal's); its
    /// address identifies the thread among the runtime's handles (`turn_key`).
    links: Arc<Links>,
    /// The run's state, whose lock is the thread's turn ([`lock_run`](Self::lock_run)).
    run: tokio::sync::Mutex<ThreadState>,
    /// The tool calls of the model step last stored, for the next request's assembly.
    pub(crate) last_calls: LastCalls,
    /// Whether this process created it as a subagent's child thread (settings hooks fire
    /// `SubagentStop` for it, and no `SessionStart`).
    subagent: AtomicBool,
}

impl ThreadShared {
    /// The shared state of a thread as stored in `record`; `state` is its run's state.
    pub(crate) fn new(
        me: Weak<ThreadShared>,
        runtime: Arc<RuntimeInner>,
        live: Arc<LiveThreads<ThreadShared>>,
        agent: Arc<AgentEntry>,
        record: ThreadRecord,
        state: ThreadState,
    ) -> Self {
        let links = Arc::new(Links::new(record.status.clone()));
        let events = Arc::new(EventEmitter::new(record.id.clone(), runtime.store.clone(), links.clone()));
        let journal =
            Journal::new(record.id.clone(), runtime.store.clone(), links.clone(), events.clone(), record.values);
        ThreadShared {
            me,
            id: record.id,
            limits: runtime.limits,
            runtime,
            live,
            agent: ActiveAgent::new(agent),
            records: HandleRecords::new(),
            events,
            journal,
            links,
            run: tokio::sync::Mutex::new(state),
            last_calls: LastCalls::default(),
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

    /// Waits for the run's state: whoever holds it runs the thread. Every handle of a live
    /// thread shares this shared state (`LiveThreads`), so this one lock is the thread's turn.
    pub(crate) async fn lock_run(&self) -> RunLock<'_> {
        RunLock { state: self.run.lock().await }
    }

    /// What identifies the thread among the runtime's handles: the address of its links.
    pub(crate) fn turn_key(&self) -> usize {
        Arc::as_ptr(&self.links) as usize
    }

    pub(crate) fn self_arc(&self) -> Option<Arc<ThreadShared>> {
        self.me.upgrade()
    }

    pub(crate) fn status(&self) -> ThreadStatus {
        self.journal.status()
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
        self.journal.reload_values(record.values).await;
    }
}

/// A thread's run, held: its state (which this derefs to), whose lock is the thread's turn.
pub(crate) struct RunLock<'a> {
    state: tokio::sync::MutexGuard<'a, ThreadState>,
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
