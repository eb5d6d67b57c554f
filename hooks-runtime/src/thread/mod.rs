//! Threads: identity, state, events, and the pipelines that run hooks where the specification
//! says. Each pipeline stage is its own module with its error rule in one place:
//! `context` (R1-R8), `messages` (M1-M10), `tool_calls` (T1-T7), `turn` (the loop), `agents`
//! (handoffs), `children` (subagents as child threads). The graph is one-way:
//! `turn -> agents -> tool_calls -> children`, each using the stages below it.

mod agents;
mod approvals;

pub use approvals::{ApprovalChoice, ApprovalError};
mod children;
pub(crate) mod context;
mod host;
mod json_member_scanner;
mod messages;
mod model_step;
mod parking;
mod pipeline;
mod publisher;
mod recovery;
mod reentry;
mod resuming;
mod run_hold;
mod settings_hooks;
mod shared;
mod tool_calls;
mod turn;

// The store's PostgreSQL event log names it by this path.
pub(crate) use crate::events::ThreadEvent;
pub(crate) use model_step::{DEFAULT_MAX_REPLY_BYTES, DEFAULT_MAX_TOOL_ARGUMENT_BYTES};
pub use recovery::Recovery;
pub(crate) use recovery::{on_first_use as recovery_on_first_use, recover, start_sweeping};
pub use reentry::MAX_HOOK_DEPTH;
pub(crate) use shared::ThreadShared;

use std::fmt;
use std::sync::Arc;

use hooks_core::{HookError, HookMessage, MessageRecord, MessageUpdate, Role, Side, ThreadState};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::dispatch;
use crate::model::{FinishReason, Usage};
use crate::runtime::inner::{AgentEntry, RuntimeInner};
use crate::store::{FailReason, InboxEntry, StopReason, StoreError, ThreadRecord, ThreadStatus};

/// How a run ended. Built by the runtime; [`RunOutcome::new`] builds one elsewhere (a test, a
/// custom front end), its other fields set afterwards.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// The thread's status after the run.
    pub status: ThreadStatus,
    /// Model steps taken in the run.
    pub steps: u32,
    /// The last text the model replied with, if any.
    pub reply: Option<String>,
    /// The agent the thread was handed off to during the run.
    pub handed_off_to: Option<String>,
    /// What went wrong when the run failed outside the hooks, such as the model's error.
    pub error: Option<String>,
    /// The tokens the run's model steps used, summed; `None` when no step reported usage.
    pub usage: Option<Usage>,
    /// Why the last model step's reply ended. [`FinishReason::Length`] means the reply was cut
    /// at the token limit ([`is_truncated`](Self::is_truncated)): the run still completes, and
    /// [`Display`](fmt::Display) says so.
    pub finish_reason: Option<FinishReason>,
}

impl RunOutcome {
    /// An outcome with `status` after `steps` model steps, and nothing else: no reply, error,
    /// handoff, usage or finish reason until they are set.
    ///
    /// ```
    /// use hooks_runtime::RunOutcome;
    /// use hooks_runtime::store::ThreadStatus;
    ///
    /// let mut done = RunOutcome::new(ThreadStatus::Idle, 1);
    /// done.reply = Some("hi".into());
    /// assert_eq!(done.to_string(), "the run completed after 1 model step");
    /// ```
    pub fn new(status: ThreadStatus, steps: u32) -> Self {
        RunOutcome { status, steps, reply: None, handed_off_to: None, error: None, usage: None, finish_reason: None }
    }

    /// A run that has started and not ended yet.
    pub(crate) fn running() -> Self {
        RunOutcome::new(ThreadStatus::Running, 0)
    }

    /// Whether the last model step's reply was cut at the token limit (finish reason `length`):
    /// the reply is incomplete, though the run did not fail.
    ///
    /// ```
    /// # use hooks_runtime::RunOutcome;
    /// # use hooks_runtime::model::FinishReason;
    /// # use hooks_runtime::store::ThreadStatus;
    /// let mut cut = RunOutcome::new(ThreadStatus::Idle, 1);
    /// cut.reply = Some("The three causes are: first,".into());
    /// cut.finish_reason = Some(FinishReason::Length);
    /// assert!(cut.is_truncated());
    /// assert_eq!(
    ///     cut.to_string(),
    ///     "the run completed after 1 model step; the last reply was cut at the model's token limit (finish reason `length`)"
    /// );
    /// ```
    pub fn is_truncated(&self) -> bool {
        self.finish_reason.as_ref().is_some_and(FinishReason::is_truncated)
    }

    /// Whether the run failed (status `failed`, such as `model_error`). A run that stopped early
    /// on purpose (`hook_blocked`, `max_steps`, `aborted`) did not fail.
    pub fn is_failed(&self) -> bool {
        matches!(self.status, ThreadStatus::Failed(_))
    }

    /// The outcome, or a [`RunFailed`] error that says why when the run failed: the way to
    /// make a failed run stop the caller with `?`.
    ///
    /// ```
    /// # use hooks_runtime::RunOutcome;
    /// # use hooks_runtime::store::{FailReason, ThreadStatus};
    /// let mut failed = RunOutcome::new(ThreadStatus::Failed(FailReason::ModelError), 1);
    /// failed.error = Some("model endpoint returned HTTP 500 (server error)".into());
    /// let error = failed.into_result().unwrap_err();
    /// assert_eq!(error.reason(), &FailReason::ModelError);
    /// assert_eq!(
    ///     error.to_string(),
    ///     "the run failed (model_error) after 1 model step: model endpoint returned HTTP 500 (server error)"
    /// );
    /// ```
    pub fn into_result(self) -> Result<RunOutcome, RunFailed> {
        match &self.status {
            ThreadStatus::Failed(reason) => Err(RunFailed { reason: reason.clone(), outcome: Box::new(self) }),
            _ => Ok(self),
        }
    }
}

/// Says how the run ended, and why when it failed; never the reply's text.
///
/// ```
/// # use hooks_runtime::RunOutcome;
/// # use hooks_runtime::store::ThreadStatus;
/// let mut done = RunOutcome::new(ThreadStatus::Idle, 2);
/// done.reply = Some("hi".into());
/// assert_eq!(done.to_string(), "the run completed after 2 model steps");
/// ```
impl fmt::Display for RunOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let steps = match self.steps {
            1 => "1 model step".to_owned(),
            n => format!("{n} model steps"),
        };
        match &self.status {
            ThreadStatus::Idle => {
                write!(f, "the run completed after {steps}")?;
                if let Some(agent) = &self.handed_off_to {
                    write!(f, ", handed off to agent `{agent}`")?;
                }
                match &self.finish_reason {
                    Some(FinishReason::Length) => {
                        f.write_str("; the last reply was cut at the model's token limit (finish reason `length`)")
                    }
                    Some(FinishReason::ContentFilter) => f.write_str(
                        "; the last reply was cut or withheld by the provider's content filter (finish reason `content_filter`)",
                    ),
                    _ => Ok(()),
                }
            }
            ThreadStatus::Running => write!(f, "the run is still going after {steps}"),
            ThreadStatus::AwaitingApproval => {
                write!(
                    f,
                    "the run waits for a person's decision on its tool calls after {steps}: decide them to resume it"
                )
            }
            ThreadStatus::Stopped(reason) => write!(f, "the run stopped ({reason}) after {steps}"),
            ThreadStatus::Failed(reason) => {
                write!(f, "the run failed ({reason}) after {steps}")?;
                match (&self.error, reason.description()) {
                    (Some(error), _) => write!(f, ": {error}"),
                    (None, Some(meaning)) => write!(f, ": {meaning}"),
                    (None, None) => Ok(()),
                }
            }
        }
    }
}

/// A run that failed, from [`RunOutcome::into_result`]. Its `Display` (and its `Debug`, so a
/// `main` that returns it prints a sentence) says why.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{outcome}")]
pub struct RunFailed {
    reason: FailReason,
    /// Boxed: a `Result<RunOutcome, RunFailed>` stays as small as the outcome.
    outcome: Box<RunOutcome>,
}

impl RunFailed {
    /// The failure reason, such as [`FailReason::ModelError`] or
    /// [`FailReason::MessageHookError`].
    pub fn reason(&self) -> &FailReason {
        &self.reason
    }

    /// The failed run's outcome.
    pub fn outcome(&self) -> &RunOutcome {
        &self.outcome
    }

    /// The failed run's outcome, by value.
    pub fn into_outcome(self) -> RunOutcome {
        *self.outcome
    }
}

impl fmt::Debug for RunFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// What went wrong outside the hooks: an unknown agent or relationship, a missing argument, or
/// the store. Its `Display` (and its `Debug`, so a `main` that returns it prints a sentence) says
/// what is wrong and how to fix it.
///
/// ```
/// # use hooks_runtime::RuntimeError;
/// let error = RuntimeError::UnknownAgent("support".into());
/// assert_eq!(format!("{error:?}"), error.to_string());
/// assert!(error.to_string().contains("add it with `.agent::<support>()`"));
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// No agent of this name was added to the runtime.
    #[error("no agent named `{0}` was added to the runtime; add it with `.agent::<{0}>()` on the runtime builder")]
    UnknownAgent(String),
    /// No thread with this id in the store.
    #[error("no thread `{0}` in the store; check the id (`Thread::id` of a thread this runtime's store holds)")]
    UnknownThread(String),
    /// The agent has no (optional) subagent relationship of this name.
    #[error("{}", unknown_relationship_sentence(agent, name, known, *optional))]
    UnknownRelationship {
        /// The agent.
        agent: &'static str,
        /// The name asked for.
        name: String,
        /// The names it does have, of the kind asked for.
        known: Vec<&'static str>,
        /// Whether an optional relationship was asked for.
        optional: bool,
    },
    /// The relationship already has `max_instances` child threads.
    #[error(
        "relationship `{relationship}` already has its maximum of {max} child threads; reuse one of them or raise `max_instances`"
    )]
    MaxInstances {
        /// The relationship.
        relationship: String,
        /// Its limit.
        max: u32,
    },
    /// A prompt of the agent has a `{{name}}` placeholder and the thread options have no
    /// argument of that name: the model would get the placeholder as written.
    #[error(
        "prompt `{prompt}` of agent `{agent}` uses `{{{{{argument}}}}}`, but the thread has no argument `{argument}`; \
         pass it with `ThreadOptions::new().argument(\"{argument}\", ..)`"
    )]
    MissingArgument {
        /// The agent.
        agent: &'static str,
        /// The prompt whose text has the placeholder.
        prompt: &'static str,
        /// The placeholder's name.
        argument: String,
    },
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
    /// The thread's tool calls wait for approvals (A5): a message is refused, and nothing is
    /// stored, until they are decided (`Thread::approve`, `Thread::deny`) or the run aborted.
    #[error(
        "the thread waits for approvals of the tool calls {}; decide them with Thread::approve or Thread::deny (or abort the run) before sending a message",
        calls.iter().map(|call| format!("`{call}`")).collect::<Vec<_>>().join(", ")
    )]
    AwaitingApproval {
        /// The ids of the calls that wait.
        calls: Vec<String>,
    },
    /// A hook (or a tool) called this `Thread` method on the thread whose run is calling it.
    /// That run holds the thread until the hook returns, so the call would wait for itself.
    #[error("{}", held_by_caller(method))]
    HeldByCaller {
        /// The method called, such as `send`.
        method: &'static str,
    },
}

impl fmt::Debug for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

fn unknown_relationship_sentence(agent: &str, name: &str, known: &[&str], optional: bool) -> String {
    let kind = if optional { "optional subagent relationship" } else { "subagent relationship" };
    let known = if known.is_empty() {
        "none".to_owned()
    } else {
        known.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
    };
    format!(
        "agent `{agent}` has no {kind} named `{name}`; its {kind}s are: {known} (a relationship is named by its `as`, or else by its agent's name)"
    )
}

impl RuntimeError {
    pub(crate) fn unknown_relationship(agent: &'static hooks_core::AgentDef, name: &str, optional: bool) -> Self {
        let known = agent.relationships().filter(|r| !optional || r.optional).map(|r| r.name).collect();
        RuntimeError::UnknownRelationship { agent: agent.name, name: name.to_owned(), known, optional }
    }
}

/// Why a `Thread` method called from inside its own thread's run fails at once. Plain words, no
/// quoting characters: the text can reach a tool result, and from there a shell command.
fn held_by_caller(method: &str) -> String {
    format!(
        "Thread::{method} was called from inside a hook or tool of the same thread, whose run holds the thread \
         until the hook returns: it would wait for itself; from a hook use state.inject_message or \
         state.update_message, or Thread::queue_message for a later run_queued"
    )
}

impl From<StoreError> for RuntimeError {
    fn from(error: StoreError) -> Self {
        RuntimeError::Store(error)
    }
}

/// What becomes of a run whose triggering messages a hook prevented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prevented {
    /// M6: a sent message; the run fails with `message_hook_error`.
    FailRun,
    /// M7: queued messages; a prevented one leaves the queue and the others go on.
    SkipMessage,
}

/// How a side's turn ended.
pub(crate) enum TurnEnd {
    /// The side replied; the turn passes on.
    Replied,
    Stopped(StopReason),
    Failed(FailReason),
    HandedOff(String),
    /// Tool calls of the last step wait for approvals (A1).
    AwaitingApproval,
}

/// The id of an input accepted with [`Thread::queue_message`]: its inbox entry's id, which is
/// also the id of the run that takes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InputId(String);

impl InputId {
    /// The id as text, such as `run_18b2...`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InputId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Options of a new thread: its user and its arguments.
///
/// Every `{{name}}` placeholder in the agent's prompts needs an argument `name`:
/// [`Runtime::create_thread`](crate::Runtime::create_thread) refuses a thread without one
/// ([`RuntimeError::MissingArgument`]). An argument is substituted as it is (a string) or as
/// JSON (any other value), and its text is not scanned again, so an argument whose value is
/// `"{{name}}"` is how a prompt sends those braces literally.
///
/// ```
/// use hooks_runtime::ThreadOptions;
/// use serde_json::json;
///
/// let options = ThreadOptions::new()
///     .user("user_7")
///     .argument("customer", "Bob")
///     .argument("order", json!({ "id": 42, "items": 3 }));
/// assert_eq!(options.user_id.as_deref(), Some("user_7"));
/// assert_eq!(options.arguments["customer"], "Bob");
///
/// // Or several at once: pairs, or the members of a `serde_json::Map`.
/// let pairs = ThreadOptions::new().arguments([("customer", "Bob"), ("city", "Lyon")]);
/// assert_eq!(pairs.arguments["city"], "Lyon");
/// ```
#[derive(Debug, Clone, Default)]
pub struct ThreadOptions {
    /// The associated user.
    pub user_id: Option<String>,
    /// Invocation arguments, readable by hooks and interpolated into the prompt as `{{name}}`.
    pub arguments: serde_json::Map<String, Value>,
}

impl ThreadOptions {
    /// No user, no arguments.
    pub fn new() -> Self {
        ThreadOptions::default()
    }

    /// The thread's user: the user-scope hooks and `GET /threads` of `hooks-server` find the
    /// thread under it.
    pub fn user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = Some(user_id.into());
        self
    }

    /// Sets the argument `name` (replacing an earlier value): a string, a number, or any JSON
    /// value.
    pub fn argument(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.arguments.insert(name.into(), value.into());
        self
    }

    /// Sets every `(name, value)` pair, such as the members of a `serde_json::Map`.
    pub fn arguments<K: Into<String>, V: Into<Value>>(mut self, arguments: impl IntoIterator<Item = (K, V)>) -> Self {
        self.arguments.extend(arguments.into_iter().map(|(name, value)| (name.into(), value.into())));
        self
    }
}

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
#[derive(Clone)]
pub struct Thread {
    pub(crate) shared: Arc<ThreadShared>,
}

impl fmt::Debug for Thread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Thread").field("id", &self.shared.id).finish_non_exhaustive()
    }
}

impl Thread {
    /// Creates a thread of agent `agent` and runs its `after_thread_created` hooks (at rest).
    /// Refused when a prompt of the agent has a `{{name}}` placeholder the arguments lack.
    pub(crate) async fn create(
        runtime: &Arc<RuntimeInner>,
        agent: &str,
        options: ThreadOptions,
    ) -> Result<Thread, RuntimeError> {
        let entry = runtime.agents.get(agent).cloned().ok_or_else(|| RuntimeError::UnknownAgent(agent.to_owned()))?;
        for prompt in [entry.def.side_a.prompt(), entry.def.side_b.prompt()].into_iter().flatten() {
            if let Some(argument) = context::first_missing_argument(prompt.prompt, &options.arguments) {
                return Err(RuntimeError::MissingArgument {
                    agent: entry.def.name,
                    prompt: prompt.name,
                    argument: argument.to_owned(),
                });
            }
        }
        Thread::insert(runtime, entry, options, false).await
    }

    /// A subagent's child thread. Its arguments are empty (a subagent tool call carries only a
    /// message), so its prompt's placeholders are not checked here; each request that sends one
    /// unfilled logs a warning.
    pub(crate) async fn create_child(
        runtime: &Arc<RuntimeInner>,
        agent: &str,
        options: ThreadOptions,
    ) -> Result<Thread, RuntimeError> {
        let entry = runtime.agents.get(agent).cloned().ok_or_else(|| RuntimeError::UnknownAgent(agent.to_owned()))?;
        Thread::insert(runtime, entry, options, true).await
    }

    async fn insert(
        runtime: &Arc<RuntimeInner>,
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
        runtime.store.create_thread(&record).await?;
        let thread = Thread::from_record(runtime.clone(), entry, record);
        if subagent {
            thread.shared.mark_subagent();
        }
        thread.run_after_thread_created().await;
        Ok(thread)
    }

    /// Reopens a stored thread: its history is the store's, its agent must be in the runtime.
    pub(crate) async fn open(runtime: &Arc<RuntimeInner>, thread_id: &str) -> Result<Thread, RuntimeError> {
        let record = runtime
            .store
            .load_thread(thread_id)
            .await?
            .ok_or_else(|| RuntimeError::UnknownThread(thread_id.to_owned()))?;
        let entry = runtime
            .agents
            .get(record.agent.as_str())
            .cloned()
            .ok_or_else(|| RuntimeError::UnknownAgent(record.agent.clone()))?;
        Ok(Thread::from_record(runtime.clone(), entry, record))
    }

    fn from_record(runtime: Arc<RuntimeInner>, entry: Arc<AgentEntry>, record: ThreadRecord) -> Self {
        let shared = Arc::new_cyclic(|weak| {
            let host = Arc::new(host::ThreadHost { shared: weak.clone() });
            let mut state = ThreadState::new(record.id.clone(), record.agent.clone(), host);
            state.user_id = record.user_id.clone();
            state.created_at = record.created_at;
            state.arguments = record.arguments.clone();
            ThreadShared::new(weak.clone(), runtime, entry, record, state)
        });
        Thread { shared }
    }

    /// The thread's id.
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The name of the agent that owns the thread now (a handoff changes it).
    pub fn agent_name(&self) -> &'static str {
        self.shared.agent().def.name
    }

    /// The thread's status.
    pub fn status(&self) -> ThreadStatus {
        self.shared.status()
    }

    /// Subscribes to the thread's events (`tool_call_started`, `tool_call_done`, emitted events,
    /// status changes): those of every run of the thread in this runtime, whichever handle runs
    /// it (another `open_thread`, the recovery of an inbox).
    pub fn subscribe(&self) -> broadcast::Receiver<ThreadEvent> {
        self.shared.subscribe()
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
        self.shared.subscribe_deltas()
    }

    /// Every stored message, oldest first.
    pub async fn messages(&self) -> Result<Vec<HookMessage>, RuntimeError> {
        Ok(self.shared.runtime.store.messages(&self.shared.id).await?)
    }

    /// Sends a user message and runs the responding side's turn. A message that a
    /// `before_create_message` hook prevents is not stored, no turn starts, and the status
    /// becomes failed with reason `message_hook_error` (M6).
    pub async fn send(&self, text: &str) -> Result<RunOutcome, RuntimeError> {
        self.send_message(MessageRecord::new(Role::User, text)).await
    }

    /// [`Thread::send`] with a full message record.
    ///
    /// A run always settles the thread's status: a `send` future dropped before it finished
    /// (for example under `tokio::time::timeout`) leaves it `stopped` with reason `cancelled`, in
    /// memory at once and in the store right after (E9). Called from a hook of this same thread,
    /// it fails at once with [`RuntimeError::HeldByCaller`].
    pub async fn send_message(&self, message: MessageRecord) -> Result<RunOutcome, RuntimeError> {
        self.refuse_if_held("send")?;
        reentry::holding_run(&self.shared, async {
            let mut state = self.shared.lock_run().await;
            // Scale-out: the store's hold on the thread, so no other process runs it meanwhile.
            let hold = self.shared.runtime.store.hold_run(&self.shared.id).await?;
            run_hold::holding(&self.shared, hold, async {
                recovery::settle_a_dead_run(&self.shared, &state).await?;
                resuming::refuse_while_waiting(&self.shared).await?;
                let mut run = turn::RunGuard::new(&self.shared, &mut state);
                let incoming = vec![turn::Incoming::direct(message)];
                let result = turn::run_with_messages(&self.shared, run.state(), incoming, Prevented::FailRun).await;
                run.settle(result).await
            })
            .await
        })
        .await
    }

    /// Accepts a message for a later run: commits it to the thread's inbox in the store, and
    /// returns its id only once it is committed, so an accepted message survives a crash of
    /// this process (the runtime's recovery runs it, see [`Runtime::recover`](crate::Runtime::recover)).
    /// Its `before_create_message` hooks run when a run takes it: [`Thread::run_input`] for
    /// this one, [`Thread::run_queued`] for all. A store that keeps no inbox refuses it.
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
    /// use hooks_runtime::{Runtime, ThreadOptions};
    ///
    /// define_prompt! { name: queue_prompt, model: "scripted", prompt: "Echo." }
    /// define_agent! { name: queue_agent, side_a: { prompt: queue_prompt, stop_on_response: true } }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let runtime = Runtime::builder()
    ///     .agent::<queue_agent>()
    ///     .model("scripted", ScriptedModel::new([ScriptedResponse::text("hello")]))
    ///     .build()
    ///     .unwrap();
    /// let thread = runtime.create_thread("queue_agent", ThreadOptions::default()).await.unwrap();
    /// let input = thread.queue_message(MessageRecord::new(Role::User, "hello?")).await.unwrap();
    /// assert_eq!(runtime.store().pending_inputs(thread.id()).await.unwrap().len(), 1);
    /// let outcome = thread.run_input(&input).await.unwrap().expect("still in the inbox");
    /// assert_eq!(outcome.reply.as_deref(), Some("hello"));
    /// assert!(runtime.store().pending_inputs(thread.id()).await.unwrap().is_empty());
    /// # });
    /// ```
    pub async fn queue_message(&self, message: MessageRecord) -> Result<InputId, RuntimeError> {
        let entry = InboxEntry::new(message);
        self.shared.runtime.store.enqueue_input(&self.shared.id, &entry).await?;
        self.shared.note_accepted(&entry);
        Ok(InputId(entry.id))
    }

    /// Runs the accepted input `input` ([`Thread::queue_message`]) as a run of its own, like
    /// [`Thread::send_message`]: its message is stored (its inbox entry removed in the same
    /// transaction), then the responding side takes its turn. A prevented message leaves the
    /// inbox and the run fails `message_hook_error`. `None`, without a run, when the input is no
    /// longer in the inbox (a run, of this process or another, took it).
    pub async fn run_input(&self, input: &InputId) -> Result<Option<RunOutcome>, RuntimeError> {
        self.refuse_if_held("run_input")?;
        reentry::holding_run(&self.shared, async {
            let mut state = self.shared.lock_run().await;
            let hold = self.shared.runtime.store.hold_run(&self.shared.id).await?;
            run_hold::holding(&self.shared, hold, async {
                recovery::settle_a_dead_run(&self.shared, &state).await?;
                resuming::refuse_while_waiting(&self.shared).await?;
                let mut run = turn::RunGuard::new(&self.shared, &mut state);
                let result = turn::run_input(&self.shared, run.state(), input.as_str()).await;
                match result {
                    Ok(None) => {
                        run.settle(Ok(RunOutcome::running())).await?;
                        Ok(None)
                    }
                    result => {
                        run.settle(result.map(|outcome| outcome.unwrap_or_else(RunOutcome::running))).await.map(Some)
                    }
                }
            })
            .await
        })
        .await
    }

    /// Runs what is queued: the inbox's messages are stored (M7), tool calls queued with
    /// `queue_tool` run (M8), then the responding side takes its turn if messages were queued. A
    /// prevented queued message leaves the queue and the run goes on with the others; when every
    /// one is prevented, no turn starts and the status becomes failed.
    /// Settles the thread's status like [`Thread::send_message`] when dropped before it finished.
    pub async fn run_queued(&self) -> Result<RunOutcome, RuntimeError> {
        self.refuse_if_held("run_queued")?;
        reentry::holding_run(&self.shared, async {
            let mut state = self.shared.lock_run().await;
            let hold = self.shared.runtime.store.hold_run(&self.shared.id).await?;
            run_hold::holding(&self.shared, hold, async {
                recovery::settle_a_dead_run(&self.shared, &state).await?;
                resuming::refuse_while_waiting(&self.shared).await?;
                let mut run = turn::RunGuard::new(&self.shared, &mut state);
                let result = turn::run_queued(&self.shared, run.state()).await;
                run.settle(result).await
            })
            .await
        })
        .await
    }

    /// Persists a message from outside a run; `before_create_message` and
    /// `after_create_message` apply, at rest.
    ///
    /// A hook must not call this on a handle of its own thread: the run that called the hook
    /// holds the thread, so this fails at once with an error saying so; a hook uses
    /// `state.inject_message`, which writes within the run.
    pub async fn inject_message(&self, message: MessageRecord) -> Result<HookMessage, HookError> {
        if reentry::holds_run(&self.shared) {
            return Err(HookError::new(held_by_caller("inject_message")));
        }
        reentry::holding_run(&self.shared, async {
            let state = self.shared.lock_run().await;
            // Through the pipeline directly, not `state.inject_message`: that is a hook's call
            // back into the thread, which E8 counts.
            let pipeline = pipeline::Pipeline::for_state(&self.shared, &state);
            messages::create(&pipeline, &state, message, dispatch::FailureRule::Prevent)
                .await
                .map_err(messages::CreateError::into_hook_error)
        })
        .await
    }

    /// Updates a message from outside a run; `before_update_message` and `after_update_message`
    /// apply, at rest.
    /// Like [`Thread::inject_message`], it fails at once when called from a hook of this thread.
    pub async fn update_message(&self, message_id: &str, update: MessageUpdate) -> Result<HookMessage, HookError> {
        if reentry::holds_run(&self.shared) {
            return Err(HookError::new(held_by_caller("update_message")));
        }
        reentry::holding_run(&self.shared, async {
            let state = self.shared.lock_run().await;
            let pipeline = pipeline::Pipeline::for_state(&self.shared, &state);
            messages::update(&pipeline, &state, message_id, update).await
        })
        .await
    }

    /// Enables or disables an optional subagent relationship: its child's required hooks run
    /// only while it is enabled (S4).
    pub fn set_relationship_enabled(&self, relationship: &str, enabled: bool) -> Result<(), RuntimeError> {
        let slot = self
            .shared
            .agent()
            .resolved
            .optional_slot(relationship)
            .ok_or_else(|| RuntimeError::unknown_relationship(self.shared.agent().def, relationship, true))?;
        self.shared.set_enabled(slot, enabled);
        Ok(())
    }

    /// Creates a child thread for a subagent relationship and runs `after_thread_created` on it
    /// and `after_subagent_created` on this thread.
    pub async fn spawn_subagent(&self, relationship: &str) -> Result<Thread, RuntimeError> {
        self.refuse_if_held("spawn_subagent")?;
        reentry::holding_run(&self.shared, async {
            let state = self.shared.lock_run().await;
            children::spawn(&self.shared, &state, relationship).await
        })
        .await
    }

    /// Fires the abort signal of the running execution. The run stops within about 10 ms
    /// wherever it waits: on the model (its `stream()` call or its next event, so a model that
    /// never answers is stopped too), on a running tool (its future is dropped), or before its
    /// next step; it settles `stopped (aborted)`.
    ///
    /// What it keeps: every message stored before the abort (the triggering messages, earlier
    /// steps' replies and tool results). The reply being streamed is dropped, not stored. A tool
    /// call that was running, or that had not started yet in the aborted step, is answered with an
    /// error result (`the tool call was aborted before it finished`), so every stored tool call
    /// keeps its result. Without a run going, it does nothing, except on a thread whose tool
    /// calls wait for approvals (A5): every waiting call is denied, none runs, their results
    /// are stored and the run stops `aborted`; that happens in a task of its own, so the status
    /// changes (and its event is sent) right after this returns. [`Thread::abort_approvals`]
    /// does the same and waits for it.
    pub fn abort(&self) {
        self.shared.abort();
        if self.shared.status() == ThreadStatus::AwaitingApproval
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let thread = self.clone();
            handle.spawn(async move {
                if let Err(error) = thread.finish_parked(resuming::Finish::Abort).await {
                    tracing::error!(target: "hooks_runtime::thread", thread = %thread.id(), "could not deny the waiting tool calls of an aborted run: {error}");
                }
            });
        }
    }

    /// Aborts a run that waits for approvals (A5): every waiting call is denied, none runs,
    /// their results are stored in the model's call order and the run stops `aborted`. Returns
    /// the outcome; on a thread with nothing waiting it changes nothing.
    pub async fn abort_approvals(&self) -> Result<RunOutcome, RuntimeError> {
        self.refuse_if_held("abort_approvals")?;
        self.finish_parked(resuming::Finish::Abort).await
    }

    /// A thread value: as this process last wrote it, or as the store had it when the thread
    /// was opened (a value another process writes later shows after reopening).
    pub fn value(&self, key: &str) -> Option<Value> {
        self.shared.value(key)
    }

    /// Sets a thread value and persists it with the thread before returning (M11), so it is
    /// there after the thread is reopened, from this process or another one sharing the store.
    /// When the store fails, the value is not set.
    pub async fn set_value(&self, key: &str, value: Value) -> Result<(), RuntimeError> {
        Ok(self.shared.set_value(key, value).await?)
    }

    /// A file stored from a tool's attachment, by path.
    pub fn file(&self, path: &str) -> Option<String> {
        self.shared.file(path)
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
            && let Some(context) = settings_hooks::session_started(&self.shared).await
        {
            let message = settings_hooks::context_message("SessionStart", context);
            if let Err(error) = messages::create(&pipeline, &state, message, dispatch::FailureRule::Prevent).await {
                tracing::warn!(target: "hooks_runtime::thread", thread = %self.shared.id, "the context of a SessionStart hook was not stored: {}", error.into_hook_error().message());
            }
        }
    }

    /// E8: waiting for the run from inside it would never end (until the hook's timeout, which
    /// drops the call); fail at once instead.
    fn refuse_if_held(&self, method: &'static str) -> Result<(), RuntimeError> {
        if reentry::holds_run(&self.shared) { Err(RuntimeError::HeldByCaller { method }) } else { Ok(()) }
    }

    /// The side that answers a person's message: the side that is not human (side A if both
    /// are prompts).
    pub(crate) fn responding_side(entry: &AgentEntry) -> Side {
        if entry.def.side_a.prompt().is_none() && entry.def.side_b.prompt().is_some() { Side::B } else { Side::A }
    }
}
