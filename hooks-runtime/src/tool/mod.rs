//! Tools a model may call: the [`Tool`] trait, [`FnTool`] for tools written as closures, the
//! [`ToolCallListener`] an agent's tool calls report to, and the [`ToolAuthorizer`] a runtime
//! checks each call with ([`RuntimeBuilder::authorize_tools`](crate::RuntimeBuilder::authorize_tools)).

mod listener;

pub use listener::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use hooks_core::{HookToolCall, HookToolResult, ThreadState, ToolDecision};
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
    /// The tool's own decision on a call with these arguments (as the `before_tool_call` hooks
    /// left them), in the decision type every decider answers with (G11): `Allow` (the
    /// default), `Ask` (the call waits for a person's approval, A1, told the reason) or `Deny`
    /// (the call never runs; the model reads the reason, as from a hook named for the tool).
    /// It is asked after the guards and hooks, unless one of them denied the call.
    ///
    /// ```
    /// use hooks_runtime::tool::Tool;
    /// use hooks_runtime::types::{HookToolResult, ThreadState, ToolDecision};
    /// use serde_json::{Value, json};
    ///
    /// struct Transfer;
    ///
    /// #[async_trait::async_trait]
    /// impl Tool for Transfer {
    ///     fn name(&self) -> &str { "transfer" }
    ///     fn description(&self) -> &str { "Moves money." }
    ///     fn requires_approval(&self, arguments: &Value) -> ToolDecision {
    ///         match arguments["amount"].as_f64().unwrap_or(0.0) {
    ///             amount if amount > 10_000.0 => ToolDecision::deny("transfers over 10000 are done at a branch"),
    ///             amount if amount > 100.0 => ToolDecision::ask("transfers over 100 need a person"),
    ///             _ => ToolDecision::allow(),
    ///         }
    ///     }
    ///     async fn call(&self, _state: &ThreadState, _arguments: Value) -> HookToolResult {
    ///         HookToolResult::success("moved")
    ///     }
    /// }
    ///
    /// assert_eq!(Transfer.requires_approval(&json!({"amount": 5})), ToolDecision::allow());
    /// assert!(matches!(Transfer.requires_approval(&json!({"amount": 500})), ToolDecision::Ask { .. }));
    /// ```
    fn requires_approval(&self, arguments: &Value) -> ToolDecision {
        let _ = arguments;
        ToolDecision::Allow
    }
    /// Runs the tool. A failure is an error result, not a panic.
    async fn call(&self, state: &ThreadState, arguments: Value) -> HookToolResult;
    /// Runs the tool with what the runtime knows of the call: its id and name, and where its
    /// progress goes ([`ToolCallContext::report_progress`], a `tool_call_progress` event). The
    /// runtime calls this; the default calls [`Tool::call`], so a tool that reports no progress
    /// implements `call` alone. Tools from MCP servers forward their server's progress
    /// notifications here.
    ///
    /// It returns the boxed future itself (it is not an `async fn` of the trait), so the default
    /// hands back `call`'s future as it is rather than boxing a second one around it: a tool call
    /// costs the allocations it cost before this method existed. An implementation writes
    /// `Box::pin(async move { ... })`.
    fn call_with_context<'a>(
        &'a self,
        context: ToolCallContext<'a>,
        arguments: Value,
    ) -> Pin<Box<dyn Future<Output = HookToolResult> + Send + 'a>> {
        self.call(context.state(), arguments)
    }
}

/// How far a running tool call has come, as a tool reports it
/// ([`ToolCallContext::report_progress`]): `progress` of `total` (when known), and a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    /// The progress so far; it grows with each report.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening, for a person.
    pub message: Option<String>,
}

/// What a running tool call knows besides its arguments ([`Tool::call_with_context`]).
#[derive(Clone, Copy)]
pub struct ToolCallContext<'a> {
    state: &'a ThreadState,
    id: &'a str,
    progress: &'a (dyn Fn(ToolProgress) + Send + Sync),
}

impl<'a> ToolCallContext<'a> {
    /// The context of the call `id`, whose progress reports go to `progress`.
    pub fn new(state: &'a ThreadState, id: &'a str, progress: &'a (dyn Fn(ToolProgress) + Send + Sync)) -> Self {
        ToolCallContext { state, id, progress }
    }

    /// The thread's state, as [`Tool::call`] receives it.
    pub fn state(&self) -> &'a ThreadState {
        self.state
    }

    /// The id of the tool call (the model's).
    pub fn call_id(&self) -> &'a str {
        self.id
    }

    /// Reports the call's progress: a `tool_call_progress` event to the thread's subscribers,
    /// with the call's id and name.
    pub fn report_progress(&self, progress: ToolProgress) {
        (self.progress)(progress);
    }
}

impl std::fmt::Debug for ToolCallContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallContext").field("call_id", &self.id).finish_non_exhaustive()
    }
}

/// Decides whether a tool call may run, before anything else governs it (G11): `Allow` lets
/// the gate decide, `Deny` answers the call with a denial carrying the reason (it never reaches
/// the gate, the tool or the tool-call listener), `Ask` makes it wait for a person, unless the
/// gate denies it.
pub type ToolAuthorizer = dyn Fn(&ThreadState, &HookToolCall) -> ToolDecision + Send + Sync;

/// The tool's own decision on a call with these arguments (`FnTool::with_approval`).
type ApprovalCheck = dyn Fn(&Value) -> ToolDecision + Send + Sync;

/// A tool call's future, as [`Tool::call_with_context`] answers it.
type ToolFuture<'a> = Pin<Box<dyn Future<Output = HookToolResult> + Send + 'a>>;

/// How an [`FnTool`] runs a call: on its context and arguments.
type RunTool = dyn for<'a> Fn(ToolCallContext<'a>, Value) -> ToolFuture<'a> + Send + Sync;

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
    run: Arc<RunTool>,
}

impl FnTool {
    /// A tool named `name` that runs `run` on its arguments.
    pub fn new<F, Fut>(name: impl Into<String>, description: impl Into<String>, run: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HookToolResult> + Send + 'static,
    {
        Self::with_context(name, description, move |_context, arguments| Box::pin(run(arguments)))
    }

    /// A tool named `name` that runs `run` on each call's context and arguments: what a tool of
    /// this crate is built with when it needs the context (an MCP server's tool forwards its
    /// server's progress to it).
    pub(crate) fn with_context<F>(name: impl Into<String>, description: impl Into<String>, run: F) -> Self
    where
        F: for<'a> Fn(ToolCallContext<'a>, Value) -> ToolFuture<'a> + Send + Sync + 'static,
    {
        FnTool {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({ "type": "object" }),
            progress_argument: None,
            requires_approval: None,
            run: Arc::new(run),
        }
    }

    /// Declares the argument whose value `tool_call_started` receives as progress.
    #[must_use]
    pub fn with_progress_argument(mut self, argument: impl Into<String>) -> Self {
        self.progress_argument = Some(argument.into());
        self
    }

    /// The tool's own decision on each call ([`Tool::requires_approval`]): the calls for which
    /// `decide` answers `Ask` wait for a person's approval, those it answers `Deny` never run.
    ///
    /// ```
    /// use hooks_runtime::tool::{FnTool, Tool};
    /// use hooks_runtime::types::{HookToolResult, ToolDecision};
    /// use serde_json::json;
    ///
    /// let pay = FnTool::new("pay", "Pays an invoice.", |_args| async { HookToolResult::success("paid") })
    ///     .with_approval(|arguments| {
    ///         if arguments["amount"].as_f64().unwrap_or(0.0) > 100.0 {
    ///             ToolDecision::ask("payments over 100 need a person")
    ///         } else {
    ///             ToolDecision::allow()
    ///         }
    ///     });
    /// assert!(matches!(pay.requires_approval(&json!({"amount": 250})), ToolDecision::Ask { .. }));
    /// assert_eq!(pay.requires_approval(&json!({"amount": 20})), ToolDecision::allow());
    /// ```
    #[must_use]
    pub fn with_approval(mut self, decide: impl Fn(&Value) -> ToolDecision + Send + Sync + 'static) -> Self {
        self.requires_approval = Some(Arc::new(decide));
        self
    }

    /// Sets the JSON schema of the arguments.
    #[must_use]
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

    fn requires_approval(&self, arguments: &Value) -> ToolDecision {
        self.requires_approval.as_ref().map_or(ToolDecision::Allow, |decide| decide(arguments))
    }

    async fn call(&self, state: &ThreadState, arguments: Value) -> HookToolResult {
        let ignore = |_: ToolProgress| {};
        self.call_with_context(ToolCallContext::new(state, "", &ignore), arguments).await
    }

    // The runtime's way in: `run`'s future as it is, with no second box around it.
    fn call_with_context<'a>(&'a self, context: ToolCallContext<'a>, arguments: Value) -> ToolFuture<'a> {
        (self.run)(context, arguments)
    }
}
