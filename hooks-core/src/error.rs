//! The error a hook returns.

use std::fmt;

/// A hook's failure. `block` is the specification's `block: true`: on a `prefilter_llm_history`
/// hook it stops the step and stores the message as an assistant message.
///
/// ```
/// use hooks_core::HookError;
///
/// let error = HookError::new("moderation service unreachable");
/// assert!(!error.is_block());
/// let gate = HookError::block("This request was refused by the moderation gate.");
/// assert!(gate.is_block());
/// assert_eq!(gate.message(), "This request was refused by the moderation gate.");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookError {
    message: String,
    block: bool,
}

impl HookError {
    /// An ordinary hook failure.
    pub fn new(message: impl Into<String>) -> Self {
        HookError { message: message.into(), block: false }
    }

    /// A failure with `block: true`.
    pub fn block(message: impl Into<String>) -> Self {
        HookError { message: message.into(), block: true }
    }

    /// The failure's message. It may contain user data: the runtime never logs it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether the error carries `block: true`.
    pub fn is_block(&self) -> bool {
        self.block
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HookError {}

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
