//! The [`Thread`] handle: creating, opening and reading a thread. The methods that take its run
//! (sending, queued inputs, aborts) are in `runs`; approvals in `approvals`.

use std::fmt;
use std::sync::Arc;

use hooks_core::{HookMessage, Side, ThreadState};
use serde_json::Value;
use tokio::sync::broadcast;

use super::error::RuntimeError;
use super::journal::Journal;
use super::live_threads::LiveThreads;
use super::options::ThreadOptions;
use super::shared::ThreadShared;
use super::{context, event_hooks, hook_services, messages, pipeline, reentry};
use crate::dispatch;
use crate::events::ThreadEvent;
use crate::events::ThreadStatus;
use crate::shared::agent_entry::AgentEntry;
use crate::shared::runtime_inner::RuntimeInner;
use crate::store::ThreadRecord;

/// A conversation thread of one agent.
///
/// ```
/// use hooks_runtime::prelude::*;
/// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
/// use hooks_runtime::{Runtime, ThreadOptions};
///
/// #[hook(before_create_message, id = "tag_messages")]
/// fn tag(_state: &ThreadState, mut message: MessageRecord) -> MessageRecord {
///     message.extra.insert("tagged".into(), true.into());
///     message
/// }
///
/// define_prompt! { name: echo_prompt, model: "scripted", prompt: "Echo.", hooks: [tag_messages] }
/// define_agent! { name: echo, side_a: { prompt: echo_prompt, stop_on_response: true } }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let runtime = Runtime::builder()
///     .agent::<echo>()
///     .model("scripted", ScriptedModel::new([ScriptedResponse::text("hello")]))
///     .build()
///     .unwrap();
/// let thread = runtime.create_thread("echo", ThreadOptions::default()).await.unwrap();
/// let outcome = thread.send("hello?").await.unwrap();
/// assert_eq!(outcome.reply.as_deref(), Some("hello"));
/// let messages = thread.messages().await.unwrap();
/// assert!(messages.iter().all(|m| m.extra.get("tagged").is_some()));
/// # });
/// ```
///
/// # Errors
///
/// The methods answer with three error types, one per kind of request, each listing only what
/// can go wrong with that request, so a caller's `match` has no arm that cannot happen:
///
/// - [`RuntimeError`] from running and reading (`send`, `run_queued`, `messages`, `set_value`,
///   `spawn_subagent`, ...): the caller named something that does not exist, a run holds the
///   thread, the thread waits for approvals, or the store failed. How a run ended, failure
///   included, is not an error but its [`RunOutcome`](crate::RunOutcome).
/// - [`ApprovalError`](crate::approvals::ApprovalError) from deciding a waiting tool call
///   (`approve`, `deny`, `decide_bound`, ...): the refusals that belong to a decision (unknown
///   call, already decided, stale arguments, an edit or a changed policy denied) and, as
///   [`ApprovalError::Runtime`](crate::approvals::ApprovalError::Runtime), any
///   [`RuntimeError`] of the turn the decision resumes. The server maps each refusal to its
///   own HTTP status (409 for a stale or decided call).
/// - [`HookError`](crate::types::HookError) from `inject_message` and `update_message`: they
///   run `before_create_message` / `before_update_message`, and a hook that refuses the write
///   answers for it, with its message, its `block` flag and its source, as a hook's own
///   `state.inject_message` does; the store's failure comes as a `HookError` whose
///   [`source`](std::error::Error::source) is the [`StoreError`](crate::store::StoreError).
///
/// One enum over the three would put a hook's refusal and a stale approval among the cases of
/// `send`, and every caller would match arms its call cannot produce.
#[derive(Clone)]
pub struct Thread {
    pub(crate) shared: Arc<ThreadShared>,
}

impl fmt::Debug for Thread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thread").field("id", &self.shared.id).finish_non_exhaustive()
    }
}

/// The runtime's agent named `agent`.
fn agent_entry(runtime: &RuntimeInner, agent: &str) -> Result<Arc<AgentEntry>, RuntimeError> {
    runtime.registries.agents.get(agent).cloned().ok_or_else(|| RuntimeError::UnknownAgent(agent.to_owned()))
}

impl Thread {
    /// Creates a thread of agent `agent` and runs its `after_thread_created` hooks (at rest).
    /// Refused when a prompt of the agent has a `{{name}}` placeholder the arguments lack.
    pub(crate) async fn create(
        runtime: &Arc<RuntimeInner>,
        live: &Arc<LiveThreads<ThreadShared>>,
        agent: &str,
        options: ThreadOptions,
    ) -> Result<Thread, RuntimeError> {
        let entry = agent_entry(runtime, agent)?;
        for prompt in [entry.def.side_a.prompt(), entry.def.side_b.prompt()].into_iter().flatten() {
            if let Some(argument) = context::first_missing_argument(prompt.prompt, &options.arguments) {
                return Err(RuntimeError::MissingArgument {
                    agent: entry.def.name,
                    prompt: prompt.name,
                    argument: argument.to_owned(),
                });
            }
        }
        Thread::insert(runtime, live, entry, options, false).await
    }

    /// A subagent's child thread. Its arguments are empty (a subagent tool call carries only a
    /// message), so its prompt's placeholders are not checked here; each request that sends one
    /// unfilled logs a warning.
    pub(crate) async fn create_child(
        runtime: &Arc<RuntimeInner>,
        live: &Arc<LiveThreads<ThreadShared>>,
        agent: &str,
        options: ThreadOptions,
    ) -> Result<Thread, RuntimeError> {
        let entry = agent_entry(runtime, agent)?;
        Thread::insert(runtime, live, entry, options, true).await
    }

    async fn insert(
        runtime: &Arc<RuntimeInner>,
        live: &Arc<LiveThreads<ThreadShared>>,
        entry: Arc<AgentEntry>,
        options: ThreadOptions,
        subagent: bool,
    ) -> Result<Thread, RuntimeError> {
        let agent = entry.def.name;
        let record = ThreadRecord {
            id: crate::ids::new_id("thread"),
            agent: agent.to_owned(),
            user_id: options.user_id,
            created_at: crate::ids::now_ms(),
            arguments: options.arguments,
            status: ThreadStatus::Idle,
            values: serde_json::Map::new(),
        };
        Journal::create_thread(runtime.store.as_ref(), &record).await?;
        let thread = Thread::from_record(runtime.clone(), live.clone(), entry, record);
        if subagent {
            thread.shared.mark_subagent();
        }
        thread.run_after_thread_created().await;
        Ok(thread)
    }

    /// Reopens a stored thread: its live state when a handle of it lives in this runtime (no
    /// store read), else as the store has it; its agent must be in the runtime.
    pub(crate) async fn open(
        runtime: &Arc<RuntimeInner>,
        live: &Arc<LiveThreads<ThreadShared>>,
        thread_id: &str,
    ) -> Result<Thread, RuntimeError> {
        if let Some(thread) = Thread::live(live, thread_id) {
            return Ok(thread);
        }
        let record = runtime
            .store
            .load_thread(thread_id)
            .await?
            .ok_or_else(|| RuntimeError::UnknownThread(thread_id.to_owned()))?;
        let entry = runtime
            .registries
            .agents
            .get(record.agent.as_str())
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownAgent(record.agent.clone()))?;
        Ok(Thread::from_record(runtime.clone(), live.clone(), entry, record))
    }

    /// The thread's live state in this runtime (O1): the one its other handles hold, or a new
    /// one from `record`.
    fn from_record(
        runtime: Arc<RuntimeInner>,
        live: Arc<LiveThreads<ThreadShared>>,
        entry: Arc<AgentEntry>,
        record: ThreadRecord,
    ) -> Self {
        let map = live.clone();
        let id = record.id.clone();
        let shared = map.get_or_insert(&id, || {
            Arc::new_cyclic(|weak| {
                let services = Arc::new(hook_services::HookServices { shared: weak.clone() });
                let mut state = ThreadState::new(record.id.clone(), record.agent.clone(), services);
                state.user_id = record.user_id.clone();
                state.created_at = record.created_at;
                state.arguments = record.arguments.clone();
                ThreadShared::new(weak.clone(), runtime, live, entry, record, state)
            })
        });
        Thread { shared }
    }

    /// A handle of the thread's live state in this runtime, if a handle of it lives.
    pub(crate) fn live(live: &LiveThreads<ThreadShared>, thread_id: &str) -> Option<Thread> {
        live.get(thread_id).map(|shared| Thread { shared })
    }

    /// The thread's id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The name of the agent that owns the thread now (a handoff changes it).
    pub fn agent_name(&self) -> &'static str {
        self.shared.agent.current().def.name
    }

    /// The thread's status.
    pub fn status(&self) -> ThreadStatus {
        self.shared.status()
    }

    /// Subscribes to the thread's events (`tool_call_started`, `tool_call_done`, emitted events,
    /// status changes): those of every run of the thread in this runtime, whichever handle runs
    /// it (another `open_thread`, the recovery of an inbox).
    pub fn subscribe(&self) -> broadcast::Receiver<ThreadEvent> {
        self.shared.events.subscribe()
    }

    /// Subscribes to the same events as [`subscribe`](Self::subscribe), without ever falling
    /// behind: each event is queued for this subscriber until it reads it, where a
    /// [`subscribe`](Self::subscribe) receiver that falls 256 events behind misses the oldest.
    /// Nothing is held for it while no event comes, where the first `subscribe` makes a channel
    /// of 256 slots (about 26 KB) that lives as long as the thread does. For a consumer that
    /// keeps up, such as a log writer; one that stops reading holds every later event in memory
    /// until it drops the receiver.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
    ///
    /// define_prompt! { name: log_prompt, model: "scripted", prompt: "You help." }
    /// define_agent! { name: log_agent, side_a: { prompt: log_prompt, stop_on_response: true } }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([ScriptedResponse::text("Hello.")]);
    /// let runtime = Runtime::builder().agent::<log_agent>().model("scripted", model).build().unwrap();
    /// let thread = runtime.create_thread("log_agent", ThreadOptions::default()).await.unwrap();
    /// let mut events = thread.subscribe_unbounded();
    /// thread.send("Hi").await.unwrap();
    /// let mut kinds = Vec::new();
    /// while let Ok(event) = events.try_recv() {
    ///     kinds.push(serde_json::to_value(&event).unwrap()["type"].as_str().unwrap().to_owned());
    /// }
    /// assert!(kinds.contains(&"message_created".to_owned()), "{kinds:?}");
    /// # }
    /// ```
    pub fn subscribe_unbounded(&self) -> tokio::sync::mpsc::UnboundedReceiver<ThreadEvent> {
        self.shared.events.subscribe_unbounded()
    }

    /// Subscribes to the reply's text as it streams: a [`ThreadEvent::MessageDelta`] per text
    /// delta of the model, with the model step it belongs to, so a chat UI can show a reply as
    /// it arrives. The step's `message_created` event (from [`subscribe`](Self::subscribe))
    /// then carries the whole message, as stored and after the hooks, which is what counts.
    ///
    /// Deltas are separate from the other events: they are only built while a subscriber of
    /// this channel exists, never stored, and never carried to other processes by a store
    /// (a client of another process gets the whole message only). A subscriber that falls
    /// behind by more than 1,024 deltas misses some (`RecvError::Lagged`); the final message
    /// is still whole.
    ///
    /// ```
    /// # use hooks_runtime::prelude::*;
    /// # use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// # use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
    /// define_prompt! { name: chat_prompt, model: "scripted", prompt: "Chat." }
    /// define_agent! { name: chat_agent, side_a: { prompt: chat_prompt, stop_on_response: true } }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let model = ScriptedModel::new([ScriptedResponse::text("Hello there, how can I help?")]);
    /// let runtime = Runtime::builder().agent::<chat_agent>().model("scripted", model).build().unwrap();
    /// let thread = runtime.create_thread("chat_agent", ThreadOptions::default()).await.unwrap();
    /// let mut deltas = thread.subscribe_text_deltas();
    /// thread.send("Hi").await.unwrap();
    /// let mut shown = String::new();
    /// while let Ok(ThreadEvent::MessageDelta { delta, .. }) = deltas.try_recv() {
    ///     shown.push_str(&delta);
    /// }
    /// assert_eq!(shown, "Hello there, how can I help?");
    /// # }
    /// ```
    pub fn subscribe_text_deltas(&self) -> broadcast::Receiver<ThreadEvent> {
        self.shared.events.subscribe_deltas()
    }

    /// Every stored message, oldest first.
    pub async fn messages(&self) -> Result<Vec<HookMessage>, RuntimeError> {
        Ok(self.shared.journal.messages().await?)
    }

    /// Enables or disables an optional subagent relationship: its child's required hooks run
    /// only while it is enabled (S4).
    pub fn set_relationship_enabled(&self, relationship: &str, enabled: bool) -> Result<(), RuntimeError> {
        let agent = self.shared.agent.current();
        let slot = agent
            .resolved
            .optional_slot(relationship)
            .ok_or_else(|| RuntimeError::unknown_relationship(agent.def, relationship, true))?;
        self.shared.agent.set_enabled(slot, enabled);
        Ok(())
    }

    /// A thread value: as this process last wrote it, or as the store had it when the live
    /// state was made. On a store that other processes share (an SQLite file, PostgreSQL) every
    /// run reads the values back as it starts, so a value another process wrote shows from the
    /// next run of the thread here.
    pub fn value(&self, key: &str) -> Option<Value> {
        self.shared.journal.value(key)
    }

    /// Sets a thread value and persists it with the thread before returning (M11), so it is
    /// there after the thread is reopened, from this process or another one sharing the store.
    /// When the store fails, the value is not set.
    pub async fn set_value(&self, key: &str, value: Value) -> Result<(), RuntimeError> {
        Ok(self.shared.journal.set_value(key, value).await?)
    }

    /// A file stored from a tool's attachment, by path.
    pub fn file(&self, path: &str) -> Option<String> {
        self.shared.records.file(path)
    }

    async fn run_after_thread_created(&self) {
        let state = self.shared.lock_run().await;
        let pipeline = pipeline::Pipeline::at_rest(&self.shared);
        if let Some(chain) = pipeline.chain(hooks_core::HookKind::AfterThreadCreated) {
            crate::dispatch::await_point!(crate::dispatch::after_thread_created(&chain, &state));
        }
        // SessionStart of a settings file, for a top-level thread: its context is stored, so
        // the first turn's request carries it.
        if !self.shared.is_subagent()
            && let Some(context) = event_hooks::session_started(&self.shared).await
        {
            let message = event_hooks::context_message(&self.shared, "SessionStart", context);
            if let Err(error) = messages::create(&pipeline, &state, message, dispatch::FailureRule::Prevent).await {
                tracing::warn!(target: "hooks_runtime::thread", thread = %self.shared.id, "the context of a SessionStart hook was not stored: {}", error.into_hook_error().message());
            }
        }
        // SubagentStart, for a subagent's child thread.
        if self.shared.is_subagent()
            && let Some(context) = event_hooks::subagent_started(&self.shared).await
        {
            let message = event_hooks::context_message(&self.shared, "SubagentStart", context);
            if let Err(error) = messages::create(&pipeline, &state, message, dispatch::FailureRule::Prevent).await {
                tracing::warn!(target: "hooks_runtime::thread", thread = %self.shared.id, "the context of a SubagentStart hook was not stored: {}", error.into_hook_error().message());
            }
        }
    }

    /// E8: waiting for the run from inside it would never end (until the hook's timeout, which
    /// drops the call); fail at once instead.
    pub(super) fn refuse_if_held(&self, method: &'static str) -> Result<(), RuntimeError> {
        if reentry::holds_run(&self.shared) { Err(RuntimeError::HeldByCaller { method }) } else { Ok(()) }
    }

    /// The side that answers a person's message: the side that is not human (side A if both
    /// are prompts).
    pub(crate) fn responding_side(entry: &AgentEntry) -> Side {
        if entry.def.side_a.prompt().is_none() && entry.def.side_b.prompt().is_some() { Side::B } else { Side::A }
    }
}
