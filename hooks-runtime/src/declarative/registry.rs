//! The registry: a list of hooks, the executor that runs them, and how they are fired.

use std::fmt;
use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::{
    DefaultHookExecutor, HookAction, HookConfig, HookContext, HookEvent, HookExecutor, LOG_TARGET, LoadErrors,
    LoadReport,
};
use crate::dispatch::panics::{self, PanicLocation};
use crate::tool::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};

/// Declarative tool-call hooks: log lines and shell commands run around an agent's tool calls,
/// loaded from YAML or built in code.
///
/// Cloning is cheap (the hooks and executor are shared), so one registry can serve many agents.
///
/// ```
/// use hooks_runtime::declarative::{DeclarativeHookRegistry, HookAction, HookConfig, HookEvent, HookMatcher};
///
/// let from_yaml = DeclarativeHookRegistry::from_yaml(r#"
/// hooks:
///   - event: preToolUse
///     matcher: "file_*"
///     action:
///       type: log
///       message: "${tool} starting"
/// "#);
///
/// let in_code = DeclarativeHookRegistry::of([HookConfig::new(
///     HookEvent::PreToolUse,
///     Some(HookMatcher::new("file_*")),
///     HookAction::log("${tool} starting"),
/// )]);
/// assert_eq!(from_yaml.hooks(), in_code.hooks());
///
/// // With a runtime and an agent (anything implementing `ToolCallListenerTarget`):
/// // in_code.apply_to(&agent).await;   // sets the agent's listener, fires ON_START once
/// ```
#[derive(Clone)]
pub struct DeclarativeHookRegistry {
    inner: Arc<Inner>,
}

struct Inner {
    hooks: Vec<HookConfig>,
    executor: Arc<dyn HookExecutor>,
}

impl fmt::Debug for DeclarativeHookRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeclarativeHookRegistry").field("hooks", &self.inner.hooks).finish_non_exhaustive()
    }
}

impl Default for DeclarativeHookRegistry {
    /// A registry with no hooks.
    fn default() -> Self {
        Self::of([])
    }
}

impl DeclarativeHookRegistry {
    /// A registry of `hooks`, run by the [`DefaultHookExecutor`].
    pub fn of(hooks: impl IntoIterator<Item = HookConfig>) -> Self {
        DeclarativeHookRegistry {
            inner: Arc::new(Inner {
                hooks: hooks.into_iter().collect(),
                executor: Arc::new(DefaultHookExecutor::default()),
            }),
        }
    }

    /// Loads the hooks of a YAML document; never fails.
    ///
    /// An entry with a missing or unknown event, action type or field is skipped with a WARN that
    /// names its index and field. A document that does not parse, or that has no `hooks` list,
    /// gives an empty registry and an ERROR. Check [`hooks`](Self::hooks) afterwards if a
    /// missing hook would matter, or use [`from_yaml_strict`](Self::from_yaml_strict).
    /// Kept hooks that are probably mistakes, and an empty document, get a WARN each
    /// ([`LoadReport::warnings`]).
    pub fn from_yaml(yaml: &str) -> Self {
        Self::from_report(LoadReport::from_yaml(yaml))
    }

    /// [`from_yaml`](Self::from_yaml) for a reader (a file); a read error is logged at ERROR and
    /// gives an empty registry.
    pub fn from_yaml_reader(reader: impl Read) -> Self {
        Self::from_report(LoadReport::from_reader(reader))
    }

    /// Loads the hooks of a YAML document, or returns every problem in it (entry index, field,
    /// what is wrong) at once. Meant for CI checks of a hooks file. Warnings
    /// ([`LoadReport::warnings`]) are logged at WARN, not returned as errors.
    ///
    /// ```
    /// use hooks_runtime::declarative::DeclarativeHookRegistry;
    ///
    /// let errors = DeclarativeHookRegistry::from_yaml_strict(
    ///     "hooks:\n  - event: preToolUse\n    action: {type: log}\n",
    /// )
    /// .unwrap_err();
    /// assert_eq!(errors.problems()[0].to_string(), "entry #0 (field `action.message`): missing");
    /// ```
    pub fn from_yaml_strict(yaml: &str) -> Result<Self, LoadErrors> {
        let report = LoadReport::from_yaml(yaml);
        for warning in &report.warnings {
            tracing::warn!("hooks document: {warning}");
        }
        report.into_strict().map(Self::of)
    }

    /// The registry of a validated document's kept hooks, logging its problems: ERROR for a
    /// rejected document (nothing was kept), WARN for an unknown top-level key, for each problem
    /// of a skipped entry and for each warning (see [`LoadReport::warnings`]).
    pub fn from_report(report: LoadReport) -> Self {
        let rejected = report.has_document_problem();
        for problem in &report.problems {
            match problem.entry() {
                None if rejected => tracing::error!("hooks document ignored, no hooks loaded: {problem}"),
                // An unknown top-level key: the entries were still loaded.
                None => tracing::warn!("hooks document: {problem}"),
                Some(_) => tracing::warn!("hook skipped: {problem}"),
            }
        }
        for warning in &report.warnings {
            tracing::warn!("hooks document: {warning}");
        }
        Self::of(report.into_hooks())
    }

    /// The same hooks, carried out by `executor` in place of the log and shell executor.
    #[must_use]
    pub fn with_executor(self, executor: impl HookExecutor) -> Self {
        DeclarativeHookRegistry {
            inner: Arc::new(Inner { hooks: self.inner.hooks.clone(), executor: Arc::new(executor) }),
        }
    }

    /// The hooks, in declaration order.
    pub fn hooks(&self) -> &[HookConfig] {
        &self.inner.hooks
    }

    /// Whether there are no hooks.
    pub fn is_empty(&self) -> bool {
        self.inner.hooks.is_empty()
    }

    /// Sets this registry as `target`'s tool-call listener, replacing any listener it had, then
    /// fires [`HookEvent::OnStart`] once with `agent` set to the target's id.
    ///
    /// A registry with no hooks does nothing at all: it leaves the current listener in place and
    /// fires nothing.
    ///
    /// Settings-file hooks are another type, [`SettingsHooks`](super::SettingsHooks), given to
    /// a whole runtime with [`RuntimeBuilder::settings_hooks`](crate::RuntimeBuilder::settings_hooks).
    pub async fn apply_to<T: ToolCallListenerTarget + ?Sized>(&self, target: &T) {
        if self.inner.hooks.is_empty() {
            return;
        }
        let agent = target.agent_id().to_owned();
        target.set_tool_call_listener(Some(Arc::new(DeclarativeToolCallListener::new(self.clone()))));
        let context = HookContext::from([("agent".to_owned(), agent)]);
        self.fire_event(HookEvent::OnStart, &context).await;
    }

    /// Runs every hook of `event`, whatever its matcher, with `context`.
    ///
    /// This is the only way [`HookEvent::OnStop`] is ever fired.
    pub async fn fire_event(&self, event: HookEvent, context: &HookContext) {
        self.run(event, None, context).await;
    }

    /// Runs the hooks of `event` whose matcher accepts `tool` (matchers count only for
    /// `PRE_TOOL_USE` and `POST_TOOL_USE`), with `extra` plus `tool` as the context.
    pub async fn fire_tool_event(&self, event: HookEvent, tool: &str, extra: &HookContext) {
        let mut context = extra.clone();
        context.insert("tool".to_owned(), tool.to_owned());
        self.run(event, Some(tool), &context).await;
    }

    /// Hooks run one after another in declaration order, each awaited, so their effects are
    /// ordered and a `PRE_TOOL_USE` hook has finished before the tool starts.
    async fn run(&self, event: HookEvent, tool: Option<&str>, context: &HookContext) {
        for hook in self.inner.hooks.iter().filter(|h| h.selects(event, tool)) {
            self.execute_guarded(&hook.action, context).await;
        }
    }

    /// A panicking executor must not take the tool call, or the hooks after it, down. Its panic
    /// goes the runtime's one way (`dispatch::panics`): caught, logged by location only (the
    /// payload may carry the tool's arguments), and kept from the application's panic hook.
    async fn execute_guarded(&self, action: &HookAction, context: &HookContext) {
        crate::dispatch::panics::install();
        let result = CatchUnwind(self.inner.executor.execute(action, context)).await;
        if let Err(panic) = result {
            tracing::error!(target: LOG_TARGET, "[HOOK] {} action {panic}", action.type_name());
        }
    }
}

/// Polls a future as hook code: a panic in a poll is caught and answered with its location.
/// The async-trait future is boxed, hence `Unpin`.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, PanicLocation>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match panics::catch(|| Pin::new(inner).poll(cx)) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

/// The registry as an agent's tool-call listener: tool calls become hook events. It lives
/// beside the registry it wraps, which creates it in `apply_to`.
struct DeclarativeToolCallListener {
    registry: DeclarativeHookRegistry,
}

impl DeclarativeToolCallListener {
    fn new(registry: DeclarativeHookRegistry) -> Self {
        DeclarativeToolCallListener { registry }
    }
}

#[async_trait::async_trait]
impl ToolCallListener for DeclarativeToolCallListener {
    async fn before_tool_call(&self, tool: &str) {
        let context = HookContext::from([("event".to_owned(), HookEvent::PreToolUse.camel_case().to_owned())]);
        self.registry.fire_tool_event(HookEvent::PreToolUse, tool, &context).await;
    }

    async fn after_tool_call(&self, tool: &str, outcome: &ToolCallOutcome) {
        let mut context = HookContext::from([
            ("event".to_owned(), HookEvent::PostToolUse.camel_case().to_owned()),
            ("success".to_owned(), outcome.success.to_string()),
            ("latencyMs".to_owned(), outcome.latency.as_millis().to_string()),
        ]);
        self.registry.fire_tool_event(HookEvent::PostToolUse, tool, &context).await;
        if !outcome.success {
            // As in the reference, ON_ERROR sees the POST_TOOL_USE context plus `error`, so its
            // `event` value stays `postToolUse`.
            context.insert("error".to_owned(), outcome.error.clone().unwrap_or_default());
            self.registry.fire_tool_event(HookEvent::OnError, tool, &context).await;
        }
    }
}
