//! The seam between an agent's tool-call pipeline and whoever listens to it.
//!
//! An agent has exactly one tool-call listener. The runtime calls it around every tool call that
//! passed the agent's authorization check; a denied call never reaches it. The declarative YAML
//! registry ([`crate::declarative`]) is one such listener.

use std::sync::Arc;
use std::time::Duration;

/// What became of one tool call, as a listener sees it after the tool ran.
///
/// ```
/// use std::time::Duration;
/// use hooks_runtime::tool::ToolCallOutcome;
///
/// let failed = ToolCallOutcome::failure(Duration::from_millis(12), "no such order");
/// assert!(!failed.success);
/// assert!(ToolCallOutcome::success(Duration::ZERO).error.is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolCallOutcome {
    /// Whether the tool returned a success result.
    pub success: bool,
    /// How long the tool took, from just before it ran to just after it returned.
    pub latency: Duration,
    /// The tool's error message when it failed.
    pub error: Option<String>,
}

impl ToolCallOutcome {
    /// A call that succeeded after `latency`.
    pub fn success(latency: Duration) -> Self {
        ToolCallOutcome { success: true, latency, error: None }
    }

    /// A call that failed with `error` after `latency`.
    pub fn failure(latency: Duration, error: impl Into<String>) -> Self {
        ToolCallOutcome { success: false, latency, error: Some(error.into()) }
    }
}

/// Observes the tool calls of one agent.
///
/// `before_tool_call` is awaited before the tool runs, so a slow listener delays the call; it
/// cannot veto it. `after_tool_call` is awaited after the tool returned, for success and failure.
///
/// ```
/// use hooks_runtime::tool::{ToolCallListener, ToolCallOutcome};
///
/// struct Printer;
///
/// #[hooks_runtime::async_trait]
/// impl ToolCallListener for Printer {
///     async fn before_tool_call(&self, tool: &str) {
///         println!("calling {tool}");
///     }
///     async fn after_tool_call(&self, tool: &str, outcome: &ToolCallOutcome) {
///         println!("{tool} done, success={}", outcome.success);
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait ToolCallListener: Send + Sync + 'static {
    /// Runs before the tool named `tool` executes.
    async fn before_tool_call(&self, tool: &str);
    /// Runs after the tool named `tool` returned, whether it succeeded or failed.
    async fn after_tool_call(&self, tool: &str, outcome: &ToolCallOutcome);
}

/// Something that owns one tool-call listener slot: an agent of the runtime.
pub trait ToolCallListenerTarget {
    /// The agent's id, as the declarative registry reports it in `ON_START`'s `agent` value.
    fn agent_id(&self) -> &str;
    /// Replaces the listener; `None` removes it.
    fn set_tool_call_listener(&self, listener: Option<Arc<dyn ToolCallListener>>);
}
