//! How a run ended ([`RunOutcome`], [`RunFailed`]), and how a turn or a prevented run ends
//! inside the runtime (`TurnEnd`, `Prevented`).

use std::fmt;

use crate::events::ThreadStatus;
use crate::model::{FinishReason, Usage};
use crate::reasons::{FailReason, StopReason};
use crate::run_error::RunError;

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
    /// What went wrong: the model's error when the run failed on it, or the hook that kept the
    /// run's message out (a block with its reason, or a failure). A [`RunError`]: its kind, the
    /// sentence (`to_string()`, [`RunError::message`]) and the error it came from
    /// ([`std::error::Error::source`]: the [`ModelError`](crate::model::ModelError), the
    /// [`HookError`](crate::types::HookError) and what it wraps).
    pub error: Option<RunError>,
    /// The reason a hook gave when it blocked the message that started the run: a
    /// `before_create_message` hook's [`HookError::block`](crate::types::HookError::block), or a
    /// settings file's `UserPromptSubmit` hook. Written by the hook for the person sending (an
    /// ordinary hook failure's message stays in the logs); capped at
    /// [`MAX_REASON_BYTES`](crate::approvals::MAX_REASON_BYTES).
    pub blocked: Option<String>,
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
        RunOutcome {
            status,
            steps,
            reply: None,
            handed_off_to: None,
            error: None,
            blocked: None,
            usage: None,
            finish_reason: None,
        }
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
    /// # use hooks_runtime::{RunError, RunOutcome};
    /// # use hooks_runtime::model::{ModelError, ProviderError};
    /// # use hooks_runtime::store::{FailReason, ThreadStatus};
    /// let mut failed = RunOutcome::new(ThreadStatus::Failed(FailReason::ModelError), 1);
    /// failed.error = Some(RunError::from(ModelError::from(ProviderError::new(500, "upstream"))));
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
/// `main` that returns it prints a sentence) says why; its [`source`](std::error::Error::source)
/// is the outcome's [`RunError`], when it has one, and through it the model's or the hook's
/// error.
#[derive(Clone, PartialEq, Eq)]
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

impl fmt::Display for RunFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.outcome, f)
    }
}

impl std::error::Error for RunFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.outcome.error.as_ref().map(|error| error as &(dyn std::error::Error + 'static))
    }
}

impl fmt::Debug for RunFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
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
