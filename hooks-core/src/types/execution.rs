use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

/// One of the two sides of an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Side {
    /// Side A.
    #[serde(rename = "a")]
    A,
    /// Side B.
    #[serde(rename = "b")]
    B,
}

impl Side {
    /// The other side.
    pub const fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }

    /// `"a"` or `"b"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Side::A => "a",
            Side::B => "b",
        }
    }
}

/// A cancellation flag shared by an execution and everything it started.
///
/// Hooks read it ([`is_aborted`](Self::is_aborted)) or wait for it
/// ([`aborted`](Self::aborted)); whoever fires it ([`abort`](Self::abort)) wakes every waiter at
/// once, with no timer and no polling.
///
/// ```
/// use hooks_runtime::types::AbortSignal;
///
/// let signal = AbortSignal::new();
/// let seen_by_hook = signal.clone();
/// signal.abort();
/// assert!(seen_by_hook.is_aborted());
/// ```
#[derive(Debug, Clone, Default)]
pub struct AbortSignal(Arc<Abort>);

/// The flag and the tasks waiting for it.
#[derive(Debug, Default)]
struct Abort {
    fired: AtomicBool,
    waiters: tokio::sync::Notify,
}

impl AbortSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal; every clone sees it, and every [`aborted`](Self::aborted) waiting on
    /// it returns.
    pub fn abort(&self) {
        self.0.fired.store(true, Ordering::Release);
        self.0.waiters.notify_waiters();
    }

    /// Whether the signal has fired.
    pub fn is_aborted(&self) -> bool {
        self.0.fired.load(Ordering::Acquire)
    }

    /// Returns once the signal has fired (at once if it has): a branch of a `select!` that
    /// stops an async hook's work when the execution is aborted. It arms no timer and costs
    /// nothing until it is first polled.
    ///
    /// ```
    /// use hooks_runtime::types::AbortSignal;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let signal = AbortSignal::new();
    /// let firing = signal.clone();
    /// let work = std::future::pending::<()>();
    /// let stopped = tokio::spawn(async move {
    ///     tokio::select! {
    ///         () = work => "done",
    ///         () = signal.aborted() => "aborted",
    ///     }
    /// });
    /// tokio::task::yield_now().await; // the spawned task now waits
    /// firing.abort();
    /// assert_eq!(stopped.await.unwrap(), "aborted");
    /// # });
    /// ```
    pub async fn aborted(&self) {
        let mut notified = std::pin::pin!(self.0.waiters.notified());
        loop {
            // Registered before the flag is read: an `abort` between the two still wakes it
            // (`abort` sets the flag first, then wakes the registered waiters).
            notified.as_mut().enable();
            if self.is_aborted() {
                return;
            }
            notified.as_mut().await;
            notified.set(self.0.waiters.notified());
        }
    }
}

/// `state.execution` during an active execution (spec §2.2). JSON uses the spec's camelCase
/// names; the abort signal serializes as `aborted`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExecutionState {
    /// The current execution flow.
    pub flow_id: String,
    /// The side whose turn it is.
    pub current_side: Side,
    /// LLM cycles so far in this execution.
    pub step_count: u32,
    /// Whether execution has stopped.
    pub stopped: bool,
    /// Cancellation for this execution.
    #[serde(rename = "aborted", with = "abort_as_bool")]
    pub abort_signal: AbortSignal,
}

impl ExecutionState {
    /// A fresh execution on `side` with its flow id.
    pub fn new(flow_id: impl Into<String>, side: Side) -> Self {
        ExecutionState {
            flow_id: flow_id.into(),
            current_side: side,
            step_count: 0,
            stopped: false,
            abort_signal: AbortSignal::new(),
        }
    }
}

mod abort_as_bool {
    use super::AbortSignal;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(signal: &AbortSignal, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(signal.is_aborted())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<AbortSignal, D::Error> {
        let signal = AbortSignal::new();
        if bool::deserialize(deserializer)? {
            signal.abort();
        }
        Ok(signal)
    }
}
