//! The registry: a list of hooks, the executor that runs them, and how they are fired.

use std::fmt;
use std::future::Future;
use std::io::Read;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::{
    DefaultHookExecutor, HookAction, HookConfig, HookContext, HookEvent, HookExecutor, LOG_TARGET, LoadErrors,
    LoadReport, SettingsErrors, SettingsHook, SettingsPermissions, SettingsReport, SettingsState,
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
    /// Hooks of a Claude Code-format settings file, run with that format's protocol.
    settings: Vec<SettingsHook>,
    /// The same file's `permissions` rules.
    permissions: SettingsPermissions,
    /// What those hooks remember while a runtime runs them.
    settings_state: Arc<SettingsState>,
    executor: Arc<dyn HookExecutor>,
}

impl fmt::Debug for DeclarativeHookRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeclarativeHookRegistry")
            .field("hooks", &self.inner.hooks)
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
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
                settings: Vec::new(),
                permissions: SettingsPermissions::default(),
                settings_state: Arc::default(),
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
            match problem.entry {
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

    /// Loads the `hooks` object of a Claude Code-format settings file (the whole file, whose
    /// other keys are ignored, or a bare `{"hooks": ...}`); never fails.
    ///
    /// Every problem is a WARN naming where it is and the field. An unknown field is ignored
    /// and its handler runs; an entry that cannot run as written (an unknown hook type, a
    /// command naming an unset variable, a bad value) never runs, and where it guards
    /// (`PreToolUse`) it denies every call its matcher selects, naming the entry. The hooks of
    /// an event this runtime has no counterpart for are reported and not kept. A document that
    /// is not such JSON loads nothing, with an ERROR. Use
    /// [`from_settings_json_strict`](Self::from_settings_json_strict) to refuse any of that.
    ///
    /// ```
    /// use hooks_runtime::declarative::DeclarativeHookRegistry;
    ///
    /// let registry = DeclarativeHookRegistry::from_settings_json(r#"{
    ///   "permissions": {"allow": ["Bash(ls:*)"]},
    ///   "hooks": {
    ///     "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
    ///     "PreCompact": [{"hooks": [{"type": "command", "command": "./save.sh"}]}]
    ///   }
    /// }"#);
    /// assert_eq!(registry.settings_hooks().len(), 1); // PreCompact has no counterpart: reported with a WARN
    /// ```
    pub fn from_settings_json(json: &str) -> Self {
        Self::from_settings_report(SettingsReport::from_json(json))
    }

    /// Loads a settings file's hooks, or returns every problem in it at once (for CI).
    ///
    /// ```
    /// use hooks_runtime::declarative::DeclarativeHookRegistry;
    ///
    /// let errors = DeclarativeHookRegistry::from_settings_json_strict(
    ///     r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "true", "tiemout": 5}]}]}}"#,
    /// )
    /// .unwrap_err();
    /// assert_eq!(errors.problems().len(), 2); // the matcher, and the field
    /// assert!(errors.problems()[0].to_string().starts_with("hooks.PreToolUse[0] (field `matcher`): not a valid regular expression"));
    /// assert!(errors.problems()[1].to_string().starts_with("hooks.PreToolUse[0].hooks[0] (field `tiemout`): unknown field, ignored"));
    /// ```
    pub fn from_settings_json_strict(json: &str) -> Result<Self, SettingsErrors> {
        let mut report = SettingsReport::from_json(json);
        let permissions = std::mem::take(&mut report.permissions);
        report.into_strict().map(|hooks| Self::of_settings(hooks, permissions))
    }

    /// Loads a Claude Code plugin folder's hooks ([`SettingsReport::from_plugin_dir`]), never
    /// failing: its problems are logged as [`from_settings_json`](Self::from_settings_json)'s.
    /// Combine it with the project's settings with [`with_settings_of`](Self::with_settings_of).
    pub fn from_plugin_dir(folder: &std::path::Path) -> Self {
        Self::from_settings_report(SettingsReport::from_plugin_dir(folder))
    }

    /// Loads a plugin folder's hooks, or returns every problem in it at once.
    pub fn from_plugin_dir_strict(folder: &std::path::Path) -> Result<Self, SettingsErrors> {
        let mut report = SettingsReport::from_plugin_dir(folder);
        let permissions = std::mem::take(&mut report.permissions);
        report.into_strict().map(|hooks| Self::of_settings(hooks, permissions))
    }

    /// This registry's settings hooks and `permissions` rules followed by `other`'s: a project's
    /// settings file and its plugins, given to one runtime.
    ///
    /// ```
    /// use hooks_runtime::declarative::DeclarativeHookRegistry;
    ///
    /// let project = DeclarativeHookRegistry::from_settings_json(r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./a.sh"}]}]}}"#);
    /// let user = DeclarativeHookRegistry::from_settings_json(r#"{"permissions": {"deny": ["Bash(rm *)"]}, "hooks": {}}"#);
    /// let both = project.with_settings_of(&user);
    /// assert_eq!(both.settings_hooks().len(), 1);
    /// assert_eq!(both.settings_permissions().deny.len(), 1);
    /// ```
    pub fn with_settings_of(&self, other: &DeclarativeHookRegistry) -> Self {
        let mut settings = self.inner.settings.clone();
        settings.extend(other.inner.settings.iter().cloned());
        let mut permissions = self.inner.permissions.clone();
        permissions.allow.extend(other.inner.permissions.allow.iter().cloned());
        permissions.ask.extend(other.inner.permissions.ask.iter().cloned());
        permissions.deny.extend(other.inner.permissions.deny.iter().cloned());
        DeclarativeHookRegistry {
            inner: Arc::new(Inner {
                hooks: self.inner.hooks.clone(),
                settings,
                permissions,
                settings_state: Arc::default(),
                executor: self.inner.executor.clone(),
            }),
        }
    }

    /// The registry of a validated settings file's kept hooks, logging its problems: ERROR for
    /// a rejected document, WARN for each other problem.
    pub fn from_settings_report(report: SettingsReport) -> Self {
        let rejected = report.has_document_problem();
        for problem in &report.problems {
            if rejected {
                tracing::error!("settings hooks ignored, no hooks loaded: {problem}");
            } else {
                tracing::warn!("settings hooks: {problem}");
            }
        }
        Self::of_settings(report.kept, report.permissions)
    }

    fn of_settings(settings: Vec<SettingsHook>, permissions: SettingsPermissions) -> Self {
        DeclarativeHookRegistry {
            inner: Arc::new(Inner {
                hooks: Vec::new(),
                settings,
                permissions,
                settings_state: Arc::default(),
                executor: Arc::new(DefaultHookExecutor::default()),
            }),
        }
    }

    /// The hooks loaded from a settings file, by event name, then in file order.
    pub fn settings_hooks(&self) -> &[SettingsHook] {
        &self.inner.settings
    }

    /// The same hooks, carried out by `executor` in place of the log and shell executor.
    pub fn with_executor(self, executor: impl HookExecutor) -> Self {
        DeclarativeHookRegistry {
            inner: Arc::new(Inner {
                hooks: self.inner.hooks.clone(),
                settings: self.inner.settings.clone(),
                permissions: self.inner.permissions.clone(),
                settings_state: self.inner.settings_state.clone(),
                executor: Arc::new(executor),
            }),
        }
    }

    /// The settings file's `permissions` rules, which govern every tool call of a runtime given
    /// this registry ([`RuntimeBuilder::settings_hooks`](crate::RuntimeBuilder::settings_hooks)).
    pub fn settings_permissions(&self) -> &SettingsPermissions {
        &self.inner.permissions
    }

    /// A warning for each settings-hook group of a tool event whose matcher names none of
    /// `tools` (see [`SettingsReport::check_tools`]); `RuntimeBuilder::build` logs them for
    /// the runtime's tools.
    pub fn settings_tool_warnings(&self, tools: &[&str]) -> Vec<String> {
        let mut report = SettingsReport { kept: self.inner.settings.clone(), ..SettingsReport::default() };
        report.check_tools(tools);
        report.problems.iter().map(ToString::to_string).collect()
    }

    /// What the settings hooks remember while a runtime runs them.
    pub(crate) fn settings_state(&self) -> &SettingsState {
        &self.inner.settings_state
    }

    /// The hooks, in declaration order.
    pub fn hooks(&self) -> &[HookConfig] {
        &self.inner.hooks
    }

    /// Whether there are no hooks, of either format, and no `permissions` rule.
    pub fn is_empty(&self) -> bool {
        self.inner.hooks.is_empty() && self.inner.settings.is_empty() && self.inner.permissions.is_empty()
    }

    /// Sets this registry as `target`'s tool-call listener, replacing any listener it had, then
    /// fires [`HookEvent::OnStart`] once with `agent` set to the target's id.
    ///
    /// A registry with no hooks does nothing at all: it leaves the current listener in place and
    /// fires nothing.
    ///
    /// Only the YAML-format hooks act through the listener; settings-format hooks are applied
    /// to a whole runtime with [`RuntimeBuilder::settings_hooks`](crate::RuntimeBuilder::settings_hooks).
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
