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
/// ```
/// use hooks_runtime::types::AbortSignal;
///
/// let signal = AbortSignal::new();
/// let seen_by_hook = signal.clone();
/// signal.abort();
/// assert!(seen_by_hook.is_aborted());
/// ```
#[derive(Debug, Clone, Default)]
pub struct AbortSignal(Arc<AtomicBool>);

impl AbortSignal {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal; every clone sees it.
    pub fn abort(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether the signal has fired.
    pub fn is_aborted(&self) -> bool {
        self.0.load(Ordering::Acquire)
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
