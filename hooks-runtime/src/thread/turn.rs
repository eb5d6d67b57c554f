//! The turn loop: an execution starts with the messages that triggered it, runs the responding
//! side's steps (context assembly, model, tool calls) and, without `stop_on_response`, hands the
//! turn to the other side until a person's side is reached.

use crate::governing::caps::cap_hook_reason;
use crate::shared::agent_entry::AgentEntry;
use std::collections::HashMap;
use std::sync::Arc;

use hooks_core::{ExecutionState, HookToolCall, MessageRecord, Participant, PromptDef, Role, Side, ThreadState};

use super::agents::{handoff, handoff_target};
use super::event_hooks;
use super::journal::Origin;
use super::messages::{self, CreateError};
use super::pipeline::Pipeline;
use super::stored_calls::stored_tool_calls;
use super::tool_calls::{self, Execution};
use super::{Prevented, RunOutcome, RuntimeError, Thread, ThreadShared, TurnEnd, parking, step, tool_stream};
use crate::dispatch::FailureRule;
use crate::events::ThreadStatus;
use crate::reasons::{FailReason, StopReason};
use crate::run_error::{RunError, RunErrorKind};
use crate::store::{InboxEntry, StoreErrorKind};
use crate::thread_side::PromptCheck;

/// E9: the run of one `send` or `run_queued`, which always settles the thread's status. A run
/// that returned an error part way is settled `failed` (`store_error`, or `lease_lost` when the
/// store refused a write for a lost lease). A run dropped before it
/// finished, by its caller (`tokio::time::timeout`) or by a panic, is settled in memory at once,
/// `stopped` (`cancelled`) or `failed` (`panicked`); the store is written by a spawned task,
/// since a drop cannot wait.
pub(crate) struct RunGuard<'a> {
    shared: &'a Arc<ThreadShared>,
    state: &'a mut ThreadState,
    settled: bool,
}

impl<'a> RunGuard<'a> {
    pub(crate) fn new(shared: &'a Arc<ThreadShared>, state: &'a mut ThreadState) -> Self {
        RunGuard { shared, state, settled: false }
    }

    pub(crate) fn state(&mut self) -> &mut ThreadState {
        self.state
    }

    /// The run returned: a run that ended early with an error has not been finished yet.
    /// `result` is returned as it is; only an error's kind is read.
    pub(crate) async fn settle<T>(mut self, result: Result<T, RuntimeError>) -> Result<T, RuntimeError> {
        if self.state.execution.is_some() {
            // A write the store refused because the run's hold is lost ends the run as a lost
            // hold would, whether or not the hold has noticed yet.
            let reason = match &result {
                Err(RuntimeError::Store(error)) if error.kind() == StoreErrorKind::LeaseLost => FailReason::LeaseLost,
                _ => FailReason::StoreError,
            };
            // Boxed: the failure path, whose future every run's would otherwise carry inline.
            Box::pin(finish(self.shared, self.state, TurnEnd::Failed(reason), RunOutcome::running())).await;
        }
        self.settled = true;
        result
    }
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        let shared = self.shared;
        let status = if let Some(execution) = self.state.execution.as_mut() {
            let status = if std::thread::panicking() {
                ThreadStatus::Failed(FailReason::Panicked)
            } else {
                ThreadStatus::Stopped(StopReason::Cancelled)
            };
            execution.stopped = true;
            self.state.execution = None;
            self.state.clear_context();
            shared.journal.end_run_now(status.clone());
            status
        } else {
            // Dropped while `finish` was writing the final status: memory has it, the store
            // may not.
            shared.status()
        };
        store_settled_status(shared.clone(), status);
    }
}

/// Writes a dropped run's status to the store once the run is released. Under the run lock,
/// and only if no run since has changed the status: a later run's own writes stay the last.
fn store_settled_status(shared: Arc<ThreadShared>, status: ThreadStatus) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        tracing::error!(target: "hooks_runtime::thread", thread = %shared.id, "a run was dropped outside a tokio runtime: its status `{status}` is not stored");
        return;
    };
    handle.spawn(async move {
        let _run = shared.lock_run().await;
        shared.journal.store_settled_status(&status).await;
    });
}

/// A message that starts a run: sent directly, or taken from the thread's inbox entry `input`.
pub(crate) struct Incoming {
    pub(crate) record: MessageRecord,
    pub(crate) input: Option<String>,
}

impl Incoming {
    pub(crate) fn direct(record: MessageRecord) -> Self {
        Incoming { record, input: None }
    }

    pub(crate) fn from_inbox(entry: InboxEntry) -> Self {
        Incoming { record: entry.message, input: Some(entry.id) }
    }
}

/// Starts an execution, stores `incoming` (under `prevented`), and runs the responding side.
/// `from_inbox`: the messages are inbox entries, whose take marks the thread `running` in the
/// store. The messages come as an iterator, not a `Vec`, so that a run of one message allocates
/// no list for it, and as a trait object, since a generic one made these futures' poll frames,
/// which a subagent's run nests, deep enough to reach a worker's stack limit (E8's tests).
pub(crate) async fn run_with_messages(
    shared: &Arc<ThreadShared>,
    state: &mut ThreadState,
    incoming: &mut (dyn Iterator<Item = Incoming> + Send),
    from_inbox: bool,
    prevented: Prevented,
) -> Result<RunOutcome, RuntimeError> {
    // Read once for the run: only a handoff changes it, and a handoff ends the run's turns.
    let agent = shared.agent.current();
    let side = Thread::responding_side(&agent);
    begin(shared, state, side, !from_inbox).await;
    let mut outcome = RunOutcome::running();
    let stored = store_incoming(shared, state, &agent, incoming, prevented, &mut outcome).await?;
    let end = if stored == 0 {
        Some(TurnEnd::Failed(FailReason::MessageHookError))
    } else {
        run_queued_tools(shared, state).await
    };
    let end = match end {
        Some(end) => end,
        None => run_execution(shared, state, &agent, side, &mut outcome).await?,
    };
    Ok(finish(shared, state, end, outcome).await)
}

/// M7, M8: the inbox's messages are stored, then queued tool calls run, then (when messages
/// were queued) the turn. With tool calls alone, no turn follows.
pub(crate) async fn run_queued(
    shared: &Arc<ThreadShared>,
    state: &mut ThreadState,
) -> Result<RunOutcome, RuntimeError> {
    let entries = shared.journal.pending_inputs().await?;
    if !entries.is_empty() {
        let mut incoming = entries.into_iter().map(Incoming::from_inbox);
        return run_with_messages(shared, state, &mut incoming, true, Prevented::SkipMessage).await;
    }
    begin(shared, state, Thread::responding_side(&shared.agent.current()), true).await;
    let end = run_queued_tools(shared, state).await.unwrap_or(TurnEnd::Replied);
    Ok(finish(shared, state, end, RunOutcome::running()).await)
}

/// The run of one inbox entry, `None` (and no run) when it is no longer in the inbox.
pub(crate) async fn run_input(
    shared: &Arc<ThreadShared>,
    state: &mut ThreadState,
    input: &str,
) -> Result<Option<RunOutcome>, RuntimeError> {
    // Under the thread's turn (and hold), so no run takes it meanwhile: as this runtime accepted
    // it, or else read back from the store.
    let entry = match shared.journal.accepted_input(input) {
        Some(entry) => entry,
        None => match shared.journal.pending_input(input).await? {
            Some(entry) => entry,
            None => return Ok(None),
        },
    };
    let mut incoming = std::iter::once(Incoming::from_inbox(entry));
    run_with_messages(shared, state, &mut incoming, true, Prevented::SkipMessage).await.map(Some)
}

/// `store_running`: whether the `running` status is written now; `false` when the run's first
/// write (an inbox take) writes it.
pub(crate) async fn begin(shared: &ThreadShared, state: &mut ThreadState, side: Side, store_running: bool) {
    let execution = ExecutionState::new(crate::ids::new_id("flow"), side);
    let abort = execution.abort_signal.clone();
    state.execution = Some(execution);
    shared.journal.begin_run(Some(abort), store_running).await;
}

pub(crate) async fn finish(
    shared: &ThreadShared,
    state: &mut ThreadState,
    end: TurnEnd,
    mut outcome: RunOutcome,
) -> RunOutcome {
    let status = match end {
        TurnEnd::Replied => ThreadStatus::Idle,
        TurnEnd::HandedOff(agent) => {
            outcome.handed_off_to = Some(agent);
            ThreadStatus::Idle
        }
        TurnEnd::Stopped(reason) => ThreadStatus::Stopped(reason),
        TurnEnd::Failed(reason) => ThreadStatus::Failed(reason),
        TurnEnd::AwaitingApproval => ThreadStatus::AwaitingApproval,
    };
    let status = super::run_permit::final_status(status);
    if let Some(execution) = state.execution.as_mut() {
        execution.stopped = true;
    }
    state.execution = None;
    state.clear_context();
    shared.journal.end_run(status.clone()).await;
    crate::spans::record_run_end(&status, outcome.usage);
    outcome.status = status;
    outcome
}

/// Stores the triggering messages; returns how many were stored. A message that a hook blocks
/// puts the hook's reason in `outcome.error`; when none is stored, the first hook failure that
/// prevented one is `outcome.error`, with the hook's error as its source.
async fn store_incoming(
    shared: &ThreadShared,
    state: &ThreadState,
    agent: &AgentEntry,
    incoming: &mut (dyn Iterator<Item = Incoming> + Send),
    prevented: Prevented,
    outcome: &mut RunOutcome,
) -> Result<usize, RuntimeError> {
    let pipeline = Pipeline::for_run(shared, state, agent);
    let mut stored = 0;
    let mut first_failure = None;
    for Incoming { record, input } in incoming {
        let context = match event_hooks::user_prompt(shared, &record).await {
            PromptCheck::Pass(context) => context,
            PromptCheck::Blocked(reason) => {
                outcome.error = Some(RunError::new(
                    RunErrorKind::MessageBlocked,
                    format!("a UserPromptSubmit hook blocked the message: {reason}"),
                ));
                outcome.blocked = Some(cap_hook_reason("UserPromptSubmit", reason));
                // As a prevented message (M7): a blocked queued message leaves the queue.
                if let Some(input) = &input {
                    shared.journal.drop_input(input).await?;
                }
                if prevented == Prevented::FailRun {
                    return Ok(0);
                }
                continue;
            }
        };
        let origin = input.as_deref().map_or(Origin::Run, Origin::Input);
        match messages::create_from(&pipeline, state, record, FailureRule::Prevent, origin).await {
            Ok(_) => {
                stored += 1;
                if let Some(context) = context {
                    let message = event_hooks::context_message(shared, "UserPromptSubmit", context);
                    let _ = messages::create(&pipeline, state, message, FailureRule::Prevent).await;
                }
            }
            Err(CreateError::Prevented(error)) => {
                // A hook that blocks (`HookError::block`) gives its reason to the sender; an
                // ordinary failure's message is for the logs only.
                // The hook's error is the source either way (its own source, the `io::Error`
                // of a `?`, say, stays reachable from the outcome).
                if error.is_block() {
                    let reason = cap_hook_reason("before_create_message", error.message().to_owned());
                    outcome.error = Some(RunError::message_hook(error, Some(&reason)));
                    outcome.blocked = Some(reason);
                } else if first_failure.is_none() {
                    first_failure = Some(RunError::message_hook(error, None));
                }
                if prevented == Prevented::FailRun {
                    outcome.error = outcome.error.take().or(first_failure);
                    return Ok(0);
                }
            }
            // Another run stored it: not this run's message.
            Err(CreateError::Taken) => {}
            Err(CreateError::Store(error)) => return Err(RuntimeError::Store(error)),
        }
    }
    if stored == 0 && outcome.error.is_none() {
        outcome.error = first_failure;
    }
    Ok(stored)
}

/// M8: tool calls queued with `state.queue_tool`. Each is written as an assistant tool-call
/// message first; a hook that prevents that message prevents the call, and the run fails.
async fn run_queued_tools(shared: &ThreadShared, state: &ThreadState) -> Option<TurnEnd> {
    loop {
        let (tool, arguments) = shared.records.next_queued_tool()?;
        let pipeline = Pipeline::for_state(shared, state);
        let call = HookToolCall::new(crate::ids::new_id("call"), tool, arguments.to_string());
        let mut message = MessageRecord::new(Role::Assistant, "");
        message.content = None;
        message.tool_calls = Some(stored_tool_calls(std::slice::from_ref(&call)));
        if messages::create(&pipeline, state, message, FailureRule::Prevent).await.is_err() {
            shared.records.clear_queued_tools();
            return Some(TurnEnd::Failed(FailReason::MessageHookError));
        }
        tool_stream::started_queued(&pipeline, state, &call).await;
        tool_calls::run_call(&pipeline, state, &call, Execution::Tool).await;
    }
}

/// Runs turns from `side` until a side stops on its response, a person's side is reached, or
/// the run stops. `agent` owns the thread (the caller read it): only a handoff changes that, and
/// a handoff ends the execution.
pub(crate) async fn run_execution(
    shared: &Arc<ThreadShared>,
    state: &mut ThreadState,
    agent: &AgentEntry,
    mut side: Side,
    outcome: &mut RunOutcome,
) -> Result<TurnEnd, RuntimeError> {
    // Two model sides without `stop_on_response` would converse forever; this bounds it.
    const MAX_TURNS: u32 = 16;
    for _ in 0..MAX_TURNS {
        let side_def = agent.def.side(side);
        let Participant::Prompt(prompt) = side_def.participant else { return Ok(TurnEnd::Replied) };
        match run_turn(shared, state, agent, side, prompt, outcome).await? {
            TurnEnd::Replied if side_def.stop_on_response => return Ok(TurnEnd::Replied),
            TurnEnd::Replied => {
                side = side.other();
                if let Some(execution) = state.execution.as_mut() {
                    execution.current_side = side;
                }
            }
            end => return Ok(end),
        }
    }
    Ok(TurnEnd::Stopped(StopReason::MaxTurns))
}

/// One side's turn: steps until the model replies without calling tools, or `max_steps`. `agent`
/// owns the thread for the whole turn: only a handoff changes it, and a handoff ends the turn.
async fn run_turn(
    shared: &Arc<ThreadShared>,
    state: &mut ThreadState,
    agent: &AgentEntry,
    side: Side,
    prompt: &'static PromptDef,
    outcome: &mut RunOutcome,
) -> Result<TurnEnd, RuntimeError> {
    let max_steps = agent.def.side(side).max_steps.unwrap_or(shared.runtime.limits.default_max_steps);
    let mut failures: HashMap<String, u32> = HashMap::new();
    let mut steps_in_turn = 0;
    // Whether a Stop hook has already continued this turn (the format's `stop_hook_active`).
    let mut stop_hook_active = false;
    loop {
        if let Err(end) = begin_step(state, &mut steps_in_turn, max_steps, outcome) {
            return Ok(end);
        }
        let state: &ThreadState = state;
        let Some(execution) = state.execution.as_ref() else { return Ok(TurnEnd::Failed(FailReason::NoExecution)) };
        let pipeline = Pipeline::for_run(shared, state, agent);
        let response = match step::respond(&pipeline, state, prompt, &execution.abort_signal, outcome).await? {
            Ok(response) => response,
            Err(end) => return Ok(end),
        };
        let replied = !response.text.is_empty();
        let calls = step::store_reply(&pipeline, state, response, outcome).await;
        if calls.is_empty() {
            // This step's reply, which `store_reply` moved into the outcome.
            let reply = if replied { outcome.reply.as_deref().unwrap_or_default() } else { "" };
            match stop_hooks(&pipeline, state, reply, &mut stop_hook_active).await {
                Some(end) => return Ok(end),
                None => continue,
            }
        }
        // Boxed: the calls' path (gate, tool, result, queued calls) holds the largest futures of
        // a turn, which every step would otherwise carry and move; one allocation per step with calls.
        if let Some(end) = Box::pin(tool_step(&pipeline, state, prompt, &calls, &mut failures)).await {
            return Ok(end);
        }
    }
}

/// A step's tool calls, then the calls queued meanwhile: how the turn ends, or `None` when it
/// goes on.
async fn tool_step(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    prompt: &'static PromptDef,
    calls: &[HookToolCall],
    failures: &mut HashMap<String, u32>,
) -> Option<TurnEnd> {
    let shared = pipeline.shared;
    let ended = run_calls(pipeline, state, prompt, calls, failures).await;
    // K10: a settings hook's `continue: false` ends the turn once its step's calls are done.
    if !matches!(ended, Some(TurnEnd::AwaitingApproval)) && event_hooks::stop_requested(shared) {
        return Some(TurnEnd::Stopped(StopReason::HookStopped));
    }
    if ended.is_some() {
        return ended;
    }
    run_queued_tools(shared, state).await
}

/// Counts a step about to run; or how the turn ends instead (no execution, aborted,
/// `max_steps` reached).
fn begin_step(
    state: &mut ThreadState,
    steps_in_turn: &mut u32,
    max_steps: u32,
    outcome: &mut RunOutcome,
) -> Result<(), TurnEnd> {
    let Some(execution) = state.execution.as_mut() else { return Err(TurnEnd::Failed(FailReason::NoExecution)) };
    if execution.abort_signal.is_aborted() {
        return Err(TurnEnd::Stopped(StopReason::Aborted));
    }
    if *steps_in_turn >= max_steps {
        return Err(TurnEnd::Stopped(StopReason::MaxSteps));
    }
    *steps_in_turn += 1;
    execution.step_count += 1;
    outcome.steps += 1;
    Ok(())
}

/// After a reply without tool calls: how the turn ends, or `None` when a settings file's Stop /
/// SubagentStop hook blocks and the turn goes on with its reason, as a user message, within
/// `max_steps`.
async fn stop_hooks(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    reply: &str,
    stop_hook_active: &mut bool,
) -> Option<TurnEnd> {
    let shared = pipeline.shared;
    let stop = event_hooks::stop_continues(shared, reply, *stop_hook_active);
    let Some(stop) = event_hooks::unless_aborted(state, stop).await else {
        return Some(TurnEnd::Stopped(StopReason::Aborted));
    };
    let Some(reason) = stop else { return Some(TurnEnd::Replied) };
    *stop_hook_active = true;
    let event = if shared.is_subagent() { "SubagentStop" } else { "Stop" };
    let message = event_hooks::context_message(shared, event, reason);
    let _ = messages::create(pipeline, state, message, FailureRule::Prevent).await;
    None
}

/// The step's tool calls. A step that hands off runs its calls in order up to the handoff,
/// ungoverned; any other step is governed call by call ([`parking::run_step`]).
async fn run_calls(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    prompt: &'static PromptDef,
    calls: &[HookToolCall],
    failures: &mut HashMap<String, u32>,
) -> Option<TurnEnd> {
    let handoff_in_step = calls.iter().any(|call| handoff_target(pipeline, prompt, &call.function.name).is_some());
    if !handoff_in_step {
        // A1: calls that wait park the step once the others have run.
        return parking::run_step(pipeline, state, calls, failures).await;
    }
    for (position, call) in calls.iter().enumerate() {
        if let Some(target) = handoff_target(pipeline, prompt, &call.function.name) {
            return Some(handoff(pipeline, state, call, target).await);
        }
        let result =
            tool_calls::run_call(pipeline, state, call, parking::execution_of(pipeline, &call.function.name)).await;
        if let Some((tool, streak)) = parking::failed_too_often(pipeline, call, &result, failures) {
            // Every call of the stored assistant message gets a result; the later ones never run.
            for later in &calls[position + 1..] {
                parking::not_run(pipeline, state, later, &tool, streak).await;
            }
            return Some(parking::stop_notice(pipeline, state, &tool, streak).await);
        }
    }
    None
}
