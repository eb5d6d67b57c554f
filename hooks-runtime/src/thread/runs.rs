//! The [`Thread`] methods that take the thread's run: a sent message, queued inputs, messages
//! written at rest, subagents, aborts.

use hooks_core::{HookError, HookMessage, MessageRecord, MessageUpdate, Role, ThreadState};

use super::error::{RuntimeError, held_by_caller};
use super::handle::Thread;
use super::journal::AbortFound;
use super::options::InputId;
use super::outcome::{Prevented, RunOutcome};
use super::{children, messages, pipeline, recovery, reentry, resuming, run_permit, turn};
use crate::dispatch;
use crate::store::InboxEntry;
use tracing::Instrument as _;

impl Thread {
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
        self.as_a_run("send", async move |state| {
            let mut incoming = std::iter::once(turn::Incoming::direct(message));
            turn::run_with_messages(&self.shared, state, &mut incoming, false, Prevented::FailRun).await
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
    /// let inbox = runtime.store().inbox().expect("the in-memory store keeps an inbox");
    /// assert_eq!(inbox.pending_inputs(thread.id()).await.unwrap().len(), 1);
    /// let outcome = thread.run_input(&input).await.unwrap().expect("still in the inbox");
    /// assert_eq!(outcome.reply.as_deref(), Some("hello"));
    /// assert!(inbox.pending_inputs(thread.id()).await.unwrap().is_empty());
    /// # });
    /// ```
    pub async fn queue_message(&self, message: MessageRecord) -> Result<InputId, RuntimeError> {
        Ok(InputId(self.shared.journal.accept_input(InboxEntry::new(message)).await?))
    }

    /// Runs the accepted input `input` ([`Thread::queue_message`]) as a run of its own, like
    /// [`Thread::send_message`]: its message is stored (its inbox entry removed in the same
    /// transaction), then the responding side takes its turn. A prevented message leaves the
    /// inbox and the run fails `message_hook_error`. `None`, without a run, when the input is no
    /// longer in the inbox (a run, of this process or another, took it).
    pub async fn run_input(&self, input: &InputId) -> Result<Option<RunOutcome>, RuntimeError> {
        self.as_a_run("run_input", async |state| turn::run_input(&self.shared, state, input.as_str()).await).await
    }

    /// Runs what is queued: the inbox's messages are stored (M7), tool calls queued with
    /// `queue_tool` run (M8), then the responding side takes its turn if messages were queued. A
    /// prevented queued message leaves the queue and the run goes on with the others; when every
    /// one is prevented, no turn starts and the status becomes failed.
    /// Settles the thread's status like [`Thread::send_message`] when dropped before it finished.
    pub async fn run_queued(&self) -> Result<RunOutcome, RuntimeError> {
        self.as_a_run("run_queued", async |state| turn::run_queued(&self.shared, state).await).await
    }

    /// Runs `body` as a run of the thread, for `method`: refused when called from a hook of
    /// this thread; under the thread's run lock and the store's permit; after settling a run
    /// that died and refusing while tool calls wait for approvals; settled whichever way it ends
    /// (E9, [`turn::RunGuard`]).
    async fn as_a_run<T>(
        &self,
        method: &'static str,
        body: impl AsyncFnOnce(&mut ThreadState) -> Result<T, RuntimeError>,
    ) -> Result<T, RuntimeError> {
        self.refuse_if_held(method)?;
        let shared = &self.shared;
        let span = crate::spans::run(|| shared.agent.current().def.name, &shared.id, method);
        reentry::holding_run(shared, async {
            let mut state = shared.lock_run().await;
            // Scale-out: the store's permit to run the thread, so no other process runs it
            // meanwhile.
            let permit = shared.journal.hold_run().await?;
            run_permit::holding(shared, permit, || async {
                recovery::settle_a_dead_run(shared, &state).await?;
                resuming::refuse_while_waiting(shared).await?;
                let mut run = turn::RunGuard::new(shared, &mut state);
                // Boxed: the run's body is most of its future, which every layer around it (the
                // re-entrancy scope, the span, `send`'s own) would otherwise move by value.
                let result = Box::pin(body(run.state())).await;
                run.settle(result).await
            })
            .await
        })
        .instrument(span)
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
            messages::create_returning(&pipeline, &state, message, dispatch::FailureRule::Prevent)
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
    /// does the same and waits for it. A call approved before the abort is not denied: it runs
    /// to its result, which is stored, and the turn stops `aborted` after it, without asking
    /// the model again (O7), whether the abort came while the call waited or while the run
    /// that resumed its step carried it out.
    pub fn abort(&self) {
        // One look at the status and the signal: a run that begins meanwhile (an approval's)
        // is either found running or finds the abort noted (O7).
        if self.shared.journal.abort() == AbortFound::Waiting
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
}
