//! The error a hook returns.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

/// A hook's failure: a message, whether it carries `block: true`, and the error it came from,
/// when there is one. `block` is the specification's `block: true`: on a
/// `prefilter_llm_history` hook it stops the step and stores the message as an assistant
/// message.
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
/// The message says what failed, [`Error::source`] says why: [`with_source`](Self::with_source)
/// keeps the cause, and `?` on an [`std::io::Error`] or a [`serde_json::Error`] in a hook body
/// keeps it too. The runtime hands the error on as it is, so the cause stays reachable where
/// the failure surfaces: the error of the run outcome of a message a hook prevented, and the
/// error `Thread::inject_message` returns.
///
/// One pointer wide, so `Result<(), HookError>` is too: a hook's answer comes back in a register
/// and the error path, which allocates for its message anyway, pays for the box. Two errors are
/// equal when their messages and `block` flags are; the source is not compared.
#[derive(Clone)]
pub struct HookError(Box<Failure>);

#[derive(Clone)]
struct Failure {
    message: String,
    block: bool,
    /// Shared, so that the error stays `Clone` (a by-value chain keeps a failure to report).
    source: Option<Arc<dyn Error + Send + Sync>>,
}

impl HookError {
    /// An ordinary hook failure.
    pub fn new(message: impl Into<String>) -> Self {
        HookError(Box::new(Failure { message: message.into(), block: false, source: None }))
    }

    /// A failure with `block: true`.
    pub fn block(message: impl Into<String>) -> Self {
        HookError(Box::new(Failure { message: message.into(), block: true, source: None }))
    }

    /// The same failure, caused by `source` (the I/O or HTTP error the hook ran into), which
    /// [`Error::source`] returns. The message stays what the logs and the sender see; the
    /// source is for the program that reads the error.
    ///
    /// ```
    /// use std::error::Error as _;
    /// use hooks_runtime::types::HookError;
    ///
    /// let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no policy file");
    /// let error = HookError::new("the policy could not be read").with_source(io);
    /// assert_eq!(error.to_string(), "the policy could not be read");
    /// let cause = error.source().unwrap().downcast_ref::<std::io::Error>().unwrap();
    /// assert_eq!(cause.kind(), std::io::ErrorKind::NotFound);
    /// ```
    #[must_use]
    pub fn with_source(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.0.source = Some(Arc::new(source));
        self
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

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl Error for HookError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source.as_deref().map(|source| source as &(dyn Error + 'static))
    }
}

impl fmt::Debug for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("HookError");
        debug.field("message", &self.0.message).field("block", &self.0.block);
        if let Some(source) = &self.0.source {
            debug.field("source", source);
        }
        debug.finish()
    }
}

impl PartialEq for HookError {
    fn eq(&self, other: &Self) -> bool {
        self.0.message == other.0.message && self.0.block == other.0.block
    }
}

impl Eq for HookError {}

/// `?` on an I/O error in a hook body: the message names the failure's kind (`an I/O operation
/// failed: entity not found`), the error itself is the source. The kind, not the error's text:
/// an error made with `io::Error::other` can say anything, and the message reaches the logs.
///
/// ```
/// use std::error::Error as _;
/// use hooks_runtime::types::HookError;
///
/// fn read_policy() -> Result<String, HookError> {
///     Ok(std::fs::read_to_string("/nonexistent/policy.txt")?)
/// }
/// let error = read_policy().unwrap_err();
/// assert_eq!(error.message(), "an I/O operation failed: entity not found");
/// assert!(error.source().unwrap().is::<std::io::Error>());
/// ```
impl From<std::io::Error> for HookError {
    fn from(error: std::io::Error) -> Self {
        HookError::new(format!("an I/O operation failed: {}", error.kind())).with_source(error)
    }
}

/// `?` on a JSON error in a hook body: the message names where the JSON went wrong (`JSON could
/// not be read or written: data error at line 1, column 9`), the error itself is the source. Not
/// the error's text, which may quote the value (`invalid type: string "..."`), and the message
/// reaches the logs.
///
/// ```
/// use std::error::Error as _;
/// use hooks_runtime::types::HookError;
///
/// fn count(arguments: &str) -> Result<u32, HookError> {
///     Ok(serde_json::from_str::<u32>(arguments)?)
/// }
/// let error = count(r#""secret""#).unwrap_err();
/// assert_eq!(error.message(), "JSON could not be read or written: data error at line 1, column 8");
/// assert!(error.source().unwrap().is::<serde_json::Error>());
/// ```
impl From<serde_json::Error> for HookError {
    fn from(error: serde_json::Error) -> Self {
        let class = match error.classify() {
            serde_json::error::Category::Io => "I/O error",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "data error",
            serde_json::error::Category::Eof => "unexpected end",
        };
        let message = if error.line() == 0 {
            format!("JSON could not be read or written: {class}")
        } else {
            format!("JSON could not be read or written: {class} at line {}, column {}", error.line(), error.column())
        };
        HookError::new(message).with_source(error)
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
