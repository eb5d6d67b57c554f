//! Tools a model may call: the [`Tool`] trait, [`FnTool`] for tools written as closures, the
//! [`ToolCallListener`] an agent's tool calls report to, and the [`ToolAuthorizer`] a runtime
//! checks each call with ([`RuntimeBuilder::authorize_tools`](crate::RuntimeBuilder::authorize_tools)).

mod listener;

pub use listener::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use hooks_core::{HookToolCall, HookToolResult, ThreadState};
use serde_json::Value;

/// A tool a model may call.
///
/// A tool that declares a [`progress_argument`](Tool::progress_argument) lets `tool_call_started`
/// run as soon as that argument has streamed, with its value as `progress` (T3).
#[async_trait::async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The name the model calls it by.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// The JSON schema of its arguments.
    fn parameters(&self) -> Value {
        serde_json::json!({ "type": "object" })
    }
    /// The top-level string argument that describes what the call is about to do.
    fn progress_argument(&self) -> Option<&str> {
        None
    }
    /// Whether a call with these arguments (as the `before_tool_call` hooks left them) waits for
    /// a person's approval before it runs (A1). The default is `false`.
    fn requires_approval(&self, arguments: &Value) -> bool {
        let _ = arguments;
        false
    }
    /// Runs the tool. A failure is an error result, not a panic.
    async fn call(&self, state: &ThreadState, arguments: Value) -> HookToolResult;
}

/// Decides whether a tool call may run. A denied call never reaches the tool or the tool-call
/// listener; it is answered with an error result.
pub type ToolAuthorizer = dyn Fn(&ThreadState, &HookToolCall) -> bool + Send + Sync;

/// Whether a call with these arguments waits for approval (`FnTool::with_approval`).
type ApprovalCheck = dyn Fn(&Value) -> bool + Send + Sync;

type ToolFuture = Pin<Box<dyn Future<Output = HookToolResult> + Send>>;

/// A [`Tool`] made of a name, a description and a closure over the arguments.
///
/// ```
/// use hooks_runtime::types::HookToolResult;
/// use hooks_runtime::tool::FnTool;
///
/// let add = FnTool::new("add", "Adds two numbers.", |args| async move {
///     let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
///     HookToolResult::success(sum.to_string())
/// });
/// # let _ = add;
/// ```
#[derive(Clone)]
pub struct FnTool {
    name: String,
    description: String,
    parameters: Value,
    progress_argument: Option<String>,
    requires_approval: Option<Arc<ApprovalCheck>>,
    run: Arc<dyn Fn(Value) -> ToolFuture + Send + Sync>,
}

impl FnTool {
    /// A tool named `name` that runs `run` on its arguments.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, run: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HookToolResult> + Send + 'static,
    {
        FnTool {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({ "type": "object" }),
            progress_argument: None,
            requires_approval: None,
            run: Arc::new(move |args| Box::pin(run(args))),
        }
    }

    /// Declares the argument whose value `tool_call_started` receives as progress.
    pub fn with_progress_argument(mut self, argument: impl Into<String>) -> Self {
        self.progress_argument = Some(argument.into());
        self
    }

    /// Makes the calls for which `requires` answers `true` wait for a person's approval
    /// ([`Tool::requires_approval`]).
    ///
    /// ```
    /// use hooks_runtime::tool::{FnTool, Tool};
    /// use hooks_runtime::types::HookToolResult;
    /// use serde_json::json;
    ///
    /// let pay = FnTool::new("pay", "Pays an invoice.", |_args| async { HookToolResult::success("paid") })
    ///     .with_approval(|arguments| arguments["amount"].as_f64().unwrap_or(0.0) > 100.0);
    /// assert!(pay.requires_approval(&json!({"amount": 250})));
    /// assert!(!pay.requires_approval(&json!({"amount": 20})));
    /// ```
    pub fn with_approval(mut self, requires: impl Fn(&Value) -> bool + Send + Sync + 'static) -> Self {
        self.requires_approval = Some(Arc::new(requires));
        self
    }

    /// Sets the JSON schema of the arguments.
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool").field("name", &self.name).finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Tool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Value {
        self.parameters.clone()
    }

    fn progress_argument(&self) -> Option<&str> {
        self.progress_argument.as_deref()
    }

    fn requires_approval(&self, arguments: &Value) -> bool {
        self.requires_approval.as_ref().is_some_and(|requires| requires(arguments))
    }

    async fn call(&self, _state: &ThreadState, arguments: Value) -> HookToolResult {
        (self.run)(arguments).await
    }
}
