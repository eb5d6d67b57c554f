//! The error a hook returns.

use std::fmt;

/// A hook's failure. `block` is the specification's `block: true`: on a `prefilter_llm_history`
/// hook it stops the step and stores the message as an assistant message.
///
/// ```
/// use hooks_runtime::types::HookError;
///
/// let error = HookError::new("moderation service unreachable");
/// assert!(!error.is_block());
/// let gate = HookError::block("This request was refused by the moderation gate.");
/// assert!(gate.is_block());
/// assert_eq!(gate.message(), "This request was refused by the moderation gate.");
/// ```
///
/// One pointer wide, so `Result<(), HookError>` is too: a hook's answer comes back in a register
/// and the error path, which allocates for its message anyway, pays for the box.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.0.message)]
pub struct HookError(Box<Failure>);

#[derive(Clone, PartialEq, Eq)]
struct Failure {
    message: String,
    block: bool,
}

impl HookError {
    /// An ordinary hook failure.
    pub fn new(message: impl Into<String>) -> Self {
        HookError(Box::new(Failure { message: message.into(), block: false }))
    }

    /// A failure with `block: true`.
    pub fn block(message: impl Into<String>) -> Self {
        HookError(Box::new(Failure { message: message.into(), block: true }))
    }

    /// The failure's message. The runtime logs it in its `[Hooks] ✗` line, so, as the
    /// specification asks, keep message contents and other sensitive data out of it.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Whether the error carries `block: true`.
    pub fn is_block(&self) -> bool {
        self.0.block
    }
}

impl fmt::Debug for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HookError").field("message", &self.0.message).field("block", &self.0.block).finish()
    }
}

impl From<String> for HookError {
    fn from(message: String) -> Self {
        HookError::new(message)
    }
}

impl From<&str> for HookError {
    fn from(message: &str) -> Self {
        HookError::new(message)
    }
}

/// The result a fallible hook returns.
pub type HookResult<T> = Result<T, HookError>;

// A hook's answer fits in a register: see `HookError`.
const _: () = assert!(std::mem::size_of::<HookResult<()>>() == std::mem::size_of::<usize>());
