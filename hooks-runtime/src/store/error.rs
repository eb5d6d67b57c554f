//! [`StoreError`]: what failed in a store, as a kind a caller matches on, a sentence, and the
//! error it came from.

use std::error::Error;
use std::fmt;
use std::sync::Arc;

/// What kind of failure a [`StoreError`] is: what a caller (the runtime included) decides by.
///
/// ```
/// use hooks_runtime::store::{StoreError, StoreErrorKind};
///
/// let error = StoreError::not_found("load_thread: thread `t1`: no such thread");
/// assert_eq!(error.kind(), StoreErrorKind::NotFound);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The thread, message or inbox entry the call names is not in the store.
    NotFound,
    /// What the call would create is there already (a thread, message or inbox entry of that id).
    Conflict,
    /// The run's hold on the thread is lost (its lease expired, or another process took the
    /// thread over), so the store refused the write; nothing was written. The runtime ends such
    /// a run `failed (lease_lost)`.
    LeaseLost,
    /// Another holder keeps what the call needs past the time the store waits for it: the
    /// database is locked by another connection, or another process runs the thread. Trying
    /// again later may work.
    Busy,
    /// The store could not be reached: opening or connecting failed, or the connection broke.
    /// Trying again later may work.
    Connection,
    /// What the store holds cannot be read back (a bad column, JSON that does not decode, a
    /// schema of another version or program); the sentence names the row.
    Corrupt,
    /// The store does not do this at all (a [`MessageStore`](super::MessageStore) method it
    /// does not implement).
    Unsupported,
    /// Anything else: the database refused the statement, a blocking task failed, and so on.
    Other,
}

impl StoreErrorKind {
    /// The kind in snake_case (`not_found`, `lease_lost`), for logs and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreErrorKind::NotFound => "not_found",
            StoreErrorKind::Conflict => "conflict",
            StoreErrorKind::LeaseLost => "lease_lost",
            StoreErrorKind::Busy => "busy",
            StoreErrorKind::Connection => "connection",
            StoreErrorKind::Corrupt => "corrupt",
            StoreErrorKind::Unsupported => "unsupported",
            StoreErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for StoreErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A store failure: its [`kind`](Self::kind), a sentence that names what failed (the operation,
/// the thread, the row; never message contents), and the error it came from, when there is one
/// ([`Error::source`]). Its `Debug` is its `Display`, so a `main` that returns it prints the
/// sentence. Two errors are equal when their kinds and sentences are.
///
/// ```
/// use hooks_runtime::store::{StoreError, StoreErrorKind};
///
/// let io = std::io::Error::other("disk full");
/// let error = StoreError::new(StoreErrorKind::Other, "insert_message: thread `t1`: disk full").with_source(io);
/// assert_eq!(format!("{error:?}"), "message store: insert_message: thread `t1`: disk full");
/// assert_eq!(error.kind(), StoreErrorKind::Other);
/// assert!(std::error::Error::source(&error).unwrap().is::<std::io::Error>());
/// ```
#[derive(Clone)]
pub struct StoreError {
    kind: StoreErrorKind,
    message: String,
    /// Shared, so that the error stays `Clone` (the runtime hands one error to several callers).
    source: Option<Arc<dyn Error + Send + Sync>>,
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message store: {}", self.message)
    }
}

/// The source is the driver's error itself, not the `Arc` that shares it, so `downcast_ref`
/// finds it.
impl Error for StoreError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|source| source as &(dyn Error + 'static))
    }
}

impl StoreError {
    /// An error of `kind` that says `message` (without the `message store: ` its `Display`
    /// puts first).
    pub fn new(kind: StoreErrorKind, message: impl Into<String>) -> Self {
        StoreError { kind, message: message.into(), source: None }
    }

    /// A [`StoreErrorKind::NotFound`] error.
    pub fn not_found(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::NotFound, message)
    }

    /// A [`StoreErrorKind::Conflict`] error.
    pub fn conflict(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::Conflict, message)
    }

    /// A [`StoreErrorKind::LeaseLost`] error: a store that fences writes refuses one with it.
    pub fn lease_lost(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::LeaseLost, message)
    }

    /// A [`StoreErrorKind::Connection`] error.
    pub fn connection(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::Connection, message)
    }

    /// A [`StoreErrorKind::Corrupt`] error.
    pub fn corrupt(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::Corrupt, message)
    }

    /// A [`StoreErrorKind::Other`] error.
    pub fn other(message: impl Into<String>) -> Self {
        StoreError::new(StoreErrorKind::Other, message)
    }

    /// The same error, caused by `source` (the database driver's error, say), which
    /// [`Error::source`] returns.
    #[must_use]
    pub fn with_source(mut self, source: impl Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// The sentence, without the `message store: ` that `Display` puts first.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error, of `kind` instead (the SQL stores' row mapping, `rows`).
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn of_kind(mut self, kind: StoreErrorKind) -> Self {
        self.kind = kind;
        self
    }
}

impl PartialEq for StoreError {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.message == other.message
    }
}

impl Eq for StoreError {}

impl fmt::Debug for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
