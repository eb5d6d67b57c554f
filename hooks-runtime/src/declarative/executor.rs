//! Who carries out a hook's action: the [`HookExecutor`] trait and its default, log + shell.

use std::sync::Arc;
use std::time::Duration;

use super::command::{CommandLimits, run_command};
use super::substitution::{prepare_command, substitute};
use super::{HookAction, HookContext, LOG_TARGET};

/// How long a command may run before it is killed, unless configured otherwise.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// How many lines of a failed command's output go into its WARN log.
pub const MAX_OUTPUT_LINES: usize = 50;

/// Carries out the actions of matching hooks.
///
/// The registry awaits each call before the next hook (and, for `PRE_TOOL_USE`, before the
/// tool) runs. An executor should not fail: whatever goes wrong is its own to log. A panic is
/// caught by the registry and logged at ERROR by its location (never its message, which may
/// carry the tool's arguments), so it never reaches the tool call or the application's panic
/// hook.
///
/// ```
/// use hooks_runtime::declarative::{HookAction, HookContext, HookExecutor};
///
/// struct Stdout;
///
/// #[hooks_runtime::async_trait]
/// impl HookExecutor for Stdout {
///     async fn execute(&self, action: &HookAction, context: &HookContext) {
///         println!("{} {:?}", action.type_name(), context);
///     }
/// }
/// ```
#[async_trait::async_trait]
pub trait HookExecutor: Send + Sync + 'static {
    /// Runs `action`, whose templates are not substituted yet, with `context`.
    async fn execute(&self, action: &HookAction, context: &HookContext);
}

#[async_trait::async_trait]
impl<T: HookExecutor + ?Sized> HookExecutor for Arc<T> {
    async fn execute(&self, action: &HookAction, context: &HookContext) {
        (**self).execute(action, context).await;
    }
}

/// A [`HookExecutor`] made of a synchronous closure; see [`executor_fn`].
#[derive(Clone)]
pub struct FnExecutor<F>(F);

/// Wraps a closure as a [`HookExecutor`], handy to record hooks in tests.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use hooks_runtime::declarative::{executor_fn, DeclarativeHookRegistry, HookAction, HookConfig, HookEvent, HookMatcher};
///
/// let sink = Arc::new(Mutex::new(Vec::new()));
/// let recorder = Arc::clone(&sink);
/// let hooks = DeclarativeHookRegistry::of([HookConfig::new(
///     HookEvent::PostToolUse,
///     Some(HookMatcher::ALL),
///     HookAction::log("${tool}"),
/// )])
/// .with_executor(executor_fn(move |action, context| {
///     recorder.lock().unwrap().push(format!("{} {:?}", action.type_name(), context));
/// }));
/// # drop(hooks);
/// ```
pub fn executor_fn<F>(f: F) -> FnExecutor<F>
where
    F: Fn(&HookAction, &HookContext) + Send + Sync + 'static,
{
    FnExecutor(f)
}

#[async_trait::async_trait]
impl<F> HookExecutor for FnExecutor<F>
where
    F: Fn(&HookAction, &HookContext) + Send + Sync + 'static,
{
    async fn execute(&self, action: &HookAction, context: &HookContext) {
        (self.0)(action, context);
    }
}

/// The executor the registry uses unless told otherwise.
///
/// A `log` action writes `[HOOK] <message>` at INFO under [`LOG_TARGET`]. A `command` action
/// runs `sh -c <command>` with `tokio::process` in the process working directory, with stdin
/// closed and stdout and stderr captured, in a process group of its own. The group is killed
/// after [`command_timeout`] (30 s by default) and, for whatever the command left running, when
/// it ends (see [the module docs](crate::declarative#what-a-command-may-leave-behind)). A non-zero exit is
/// logged at WARN with the command as configured (its template: substituted values never reach
/// the log), the exit status and at most [`MAX_OUTPUT_LINES`] lines of the command's output. Nothing blocks a runtime
/// worker thread; every failure is logged, never returned.
///
/// [`command_timeout`]: DefaultHookExecutor::with_command_timeout
///
/// ```
/// use std::time::Duration;
/// use hooks_runtime::declarative::{DeclarativeHookRegistry, DefaultHookExecutor};
///
/// let hooks = DeclarativeHookRegistry::from_yaml("hooks: []")
///     .with_executor(DefaultHookExecutor::new().with_command_timeout(Duration::from_secs(5)));
/// # drop(hooks);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultHookExecutor {
    limits: CommandLimits,
}

impl Default for DefaultHookExecutor {
    fn default() -> Self {
        DefaultHookExecutor {
            limits: CommandLimits {
                timeout: DEFAULT_COMMAND_TIMEOUT,
                max_output_lines: MAX_OUTPUT_LINES,
                secret_env: Vec::new(),
            },
        }
    }
}

impl DefaultHookExecutor {
    /// The executor with a 30 s command timeout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Kills commands that run longer than `timeout` instead.
    #[must_use]
    pub fn with_command_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = timeout;
        self
    }

    /// Runs `command` actions without the variables `names` of the runtime's environment (H3):
    /// an API key the application holds, say. Otherwise a command gets the whole environment.
    ///
    /// ```
    /// use hooks_runtime::declarative::DefaultHookExecutor;
    ///
    /// let executor = DefaultHookExecutor::new().with_secret_env(["OPENAI_API_KEY"]);
    /// assert_eq!(executor.secret_env(), ["OPENAI_API_KEY"]);
    /// ```
    #[must_use]
    pub fn with_secret_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for name in names {
            let name = name.into();
            if !self.limits.secret_env.contains(&name) {
                self.limits.secret_env.push(name);
            }
        }
        self
    }

    /// The variables `command` actions run without.
    pub fn secret_env(&self) -> &[String] {
        &self.limits.secret_env
    }

    /// The current command timeout.
    pub fn command_timeout(&self) -> Duration {
        self.limits.timeout
    }
}

#[async_trait::async_trait]
impl HookExecutor for DefaultHookExecutor {
    async fn execute(&self, action: &HookAction, context: &HookContext) {
        match action {
            HookAction::Log { message } => {
                tracing::info!(target: LOG_TARGET, "[HOOK] {}", substitute(message, context));
            }
            HookAction::Command { command, mode } => {
                let prepared = prepare_command(command, *mode, context);
                run_command(command, &prepared, &self.limits).await;
            }
        }
    }
}
