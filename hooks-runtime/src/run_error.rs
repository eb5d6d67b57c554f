//! [`RunError`]: why a run went wrong, as a kind a caller matches on, the sentence a person
//! reads, and the error it came from.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

use hooks_core::HookError;

use crate::model::ModelError;

/// What kind of failure a [`RunError`] is.
///
/// ```
/// use hooks_runtime::{RunError, RunErrorKind};
/// use hooks_runtime::model::ModelError;
///
/// let error = RunError::from(ModelError::timeout("no answer in 30s"));
/// assert_eq!(error.kind(), RunErrorKind::Model);
/// assert_eq!(error.kind().as_str(), "model");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RunErrorKind {
    /// The model step failed: the provider's error, a broken stream, a cap. The source is the
    /// [`ModelError`].
    Model,
    /// The model panicked while it answered; the run fails `panicked`.
    ModelPanicked,
    /// A hook blocked the message that started the run on purpose, with a reason for the person
    /// who sent it: a `before_create_message` hook's [`HookError::block`] (the source) or a
    /// settings file's `UserPromptSubmit` hook.
    MessageBlocked,
    /// A `before_create_message` hook failed (an error, a timeout, a panic), so the message that
    /// would start the run was not stored (M6, M7). The source is the hook's [`HookError`],
    /// whose own source is what the hook ran into (the `io::Error` of a `?`, say). The
    /// sentence does not quote the hook's message: that is for the logs.
    MessageHookFailed,
}

impl RunErrorKind {
    /// The kind in snake_case (`model`, `message_blocked`), for logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            RunErrorKind::Model => "model",
            RunErrorKind::ModelPanicked => "model_panicked",
            RunErrorKind::MessageBlocked => "message_blocked",
            RunErrorKind::MessageHookFailed => "message_hook_failed",
        }
    }
}

impl fmt::Display for RunErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a run went wrong, in [`RunOutcome::error`](crate::RunOutcome::error): its
/// [`kind`](Self::kind), a sentence ([`Display`](fmt::Display), [`message`](Self::message); the
/// text `RunOutcome::error` held when it was a string), and the error it came from
/// ([`Error::source`]): the [`ModelError`] of a failed model step, the [`HookError`] of a hook
/// that prevented the run's message. Its `Debug` is its `Display`. Two errors are equal when
/// their kinds and sentences are.
///
/// ```
/// use std::error::Error as _;
/// use hooks_runtime::{RunError, RunErrorKind};
/// use hooks_runtime::model::{ModelError, ProviderError};
///
/// let error = RunError::from(ModelError::from(ProviderError::new(503, "overloaded")));
/// assert_eq!(error.kind(), RunErrorKind::Model);
/// assert_eq!(error.to_string(), "model endpoint returned HTTP 503 (server error)");
/// let model = error.source().unwrap().downcast_ref::<ModelError>().unwrap();
/// assert_eq!(model.status(), Some(503));
/// ```
#[derive(Clone)]
pub struct RunError {
    kind: RunErrorKind,
    message: String,
    /// Shared, so that the error (and the outcome holding it) stays `Clone`.
    source: Option<Arc<dyn Error + Send + Sync>>,
}

impl RunError {
    /// An error of `kind` that says `message`, with no source.
    ///
    /// ```
    /// use hooks_runtime::{RunError, RunErrorKind};
    ///
    /// let error = RunError::new(RunErrorKind::MessageBlocked, "a UserPromptSubmit hook blocked the message: no secrets");
    /// assert_eq!(error.message(), "a UserPromptSubmit hook blocked the message: no secrets");
    /// assert!(std::error::Error::source(&error).is_none());
    /// ```
    pub fn new(kind: RunErrorKind, message: impl Into<String>) -> Self {
        RunError { kind, message: message.into(), source: None }
    }

    /// The same error, caused by `source`, which [`Error::source`] returns.
    #[must_use]
    pub fn with_source(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// A `before_create_message` hook's failure that prevented the run's message; `error` is
    /// the source. A blocking error ([`HookError::block`]) is
    /// [`MessageBlocked`](RunErrorKind::MessageBlocked) and its sentence quotes the (capped)
    /// `reason` given; any other is [`MessageHookFailed`](RunErrorKind::MessageHookFailed) and
    /// its sentence does not quote the hook.
    pub(crate) fn message_hook(error: HookError, reason: Option<&str>) -> Self {
        let run_error = match reason {
            Some(reason) if error.is_block() => RunError::new(
                RunErrorKind::MessageBlocked,
                format!("a before_create_message hook blocked the message: {reason}"),
            ),
            _ => RunError::new(
                RunErrorKind::MessageHookFailed,
                "a before_create_message hook prevented the message that would start the run",
            ),
        };
        run_error.with_source(error)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> RunErrorKind {
        self.kind
    }

    /// The sentence, as `Display` writes it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A failed model step: kind [`Model`](RunErrorKind::Model), the model error's sentence, the
/// model error as the source.
impl From<ModelError> for RunError {
    fn from(error: ModelError) -> Self {
        RunError::new(RunErrorKind::Model, error.to_string()).with_source(error)
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The source is the error itself (the [`ModelError`], the [`HookError`]), not the `Arc` that
/// shares it, so `downcast_ref` finds it.
impl Error for RunError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|source| source as &(dyn Error + 'static))
    }
}

impl PartialEq for RunError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for RunError {}

impl fmt::Debug for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
