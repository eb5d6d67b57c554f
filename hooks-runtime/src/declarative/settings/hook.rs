//! One command hook of a settings file, as loaded.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{PermissionRule, SettingsEvent, SettingsMatcher};

/// How long a settings hook's command may run when its entry gives no `timeout`, as in the
/// format's own runner.
pub const DEFAULT_SETTINGS_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// One `type: "command"` hook of a settings file: the event and matcher of its group, its
/// command, its timeout and whether it fails closed (`"onFailure": "block"`).
///
/// Built by the settings loader
/// ([`SettingsHooks::from_json`](crate::declarative::SettingsHooks::from_json)).
///
/// ```
/// use std::time::Duration;
/// use hooks_runtime::declarative::{SettingsEvent, SettingsHooks};
///
/// let hooks = SettingsHooks::from_json(r#"{"hooks": {"PreToolUse": [
///     {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5, "onFailure": "block"}]}
/// ]}}"#);
/// let hook = &hooks.hooks()[0];
/// assert_eq!(hook.event(), SettingsEvent::PreToolUse);
/// assert!(hook.matcher().matches("Bash"));
/// assert_eq!(hook.command(), "./guard.sh");
/// assert_eq!(hook.timeout(), Duration::from_secs(5));
/// assert!(hook.fails_closed());
/// assert_eq!(hook.location(), "hooks.PreToolUse[0].hooks[0]");
/// assert_eq!(hook.id(), "settings:hooks.PreToolUse[0].hooks[0]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsHook {
    pub(super) event: SettingsEvent,
    pub(super) matcher: SettingsMatcher,
    pub(super) command: String,
    pub(super) timeout: Duration,
    pub(super) fail_closed: bool,
    pub(super) location: String,
    /// Why the entry cannot run as written (an unknown hook type, an unset variable, a bad
    /// value): such an entry never runs, and a `PreToolUse` one denies what its matcher selects.
    pub(super) cannot_run: Option<String>,
    /// The `if` field: on the tool events, it runs only for the calls this rule selects.
    pub(super) condition: Option<PermissionRule>,
    /// The plugin folder it came from: its command runs with `CLAUDE_PLUGIN_ROOT` set to it.
    pub(super) plugin_root: Option<PathBuf>,
    /// `async: true`: runs without holding the event; its output is ignored.
    pub(super) run_async: bool,
    /// `once: true`: runs the first time it is selected in a thread only.
    pub(super) once: bool,
    /// `type: "http"`: where the event is POSTed, in place of a command.
    pub(super) http: Option<super::http::HttpTarget>,
    /// H3: the variables of the runtime's environment its command does not get
    /// ([`SettingsHooks::secret_env`](super::SettingsHooks::secret_env)).
    pub(super) secret_env: std::sync::Arc<[String]>,
    /// The project folder of a discovered settings file
    /// ([`SettingsHooks::discover`](super::SettingsHooks::discover)): its command runs there,
    /// with `CLAUDE_PROJECT_DIR` set to it; `None` runs it in the process working directory.
    pub(super) project_dir: Option<PathBuf>,
}

impl SettingsHook {
    /// The variables of the runtime's environment its command runs without
    /// ([`SettingsHooks::secret_env`](super::SettingsHooks::secret_env)).
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// let hooks = SettingsHooks::from_json(r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#);
    /// assert!(hooks.hooks()[0].secret_env().is_empty());
    /// ```
    pub fn secret_env(&self) -> &[String] {
        &self.secret_env
    }

    /// The event it runs for.
    pub fn event(&self) -> SettingsEvent {
        self.event
    }

    /// Its group's matcher: tool names for the tool events, the `source` for `SessionStart`,
    /// the `reason` for `SessionEnd`, ignored for the others.
    pub fn matcher(&self) -> &SettingsMatcher {
        &self.matcher
    }

    /// The command, run with `sh -c`.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// When the command is killed with its process group.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether a failure of the command (an exit other than 0 and 2, output that does not
    /// parse, a timeout) is a denial rather than a warning.
    pub fn fails_closed(&self) -> bool {
        self.fail_closed
    }

    /// Where it is in the file (`hooks.PreToolUse[0].hooks[1]`), which log lines name.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Why the entry cannot run as written, if it cannot: an unknown hook type, a command naming
    /// a variable that is unset, a bad `timeout` or `onFailure`. Such an entry never runs; a
    /// `PreToolUse` one denies every call its matcher selects (a guard never fails open), an
    /// entry of another event only observes and is skipped with the load's WARN.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsReport;
    ///
    /// let report = SettingsReport::from_json(r#"{"hooks": {"PreToolUse": [{"matcher": "Bash",
    ///   "hooks": [{"type": "command", "command": "./guard.sh", "onFailure": "blok"}]}]}}"#);
    /// assert_eq!(report.kept[0].cannot_run(), Some("`onFailure`: expected `block` or `continue`, found the string \"blok\""));
    /// ```
    pub fn cannot_run(&self) -> Option<&str> {
        self.cannot_run.as_deref()
    }

    /// The id it decides under, where a `before_tool_call` hook has its own: `settings:` and
    /// its [`location`](Self::location). An approval it asks for
    /// ([`ApprovalReason::hook`](crate::approvals::ApprovalReason::hook)) and a denial the model reads
    /// name it so.
    pub fn id(&self) -> String {
        format!("settings:{}", self.location)
    }

    /// The plugin folder it came from, if it came from one
    /// ([`SettingsHooks::from_plugin_dir`](crate::declarative::SettingsHooks::from_plugin_dir)):
    /// its command runs with `CLAUDE_PLUGIN_ROOT` set to it.
    pub fn plugin_root(&self) -> Option<&Path> {
        self.plugin_root.as_deref()
    }

    /// Whether it runs without holding its event (`"async": true`); its output is ignored.
    pub fn is_async(&self) -> bool {
        self.run_async
    }

    /// Whether it runs once per thread only (`"once": true`).
    pub fn is_once(&self) -> bool {
        self.once
    }

    /// Its `if` rule (`"if": "Bash(git push:*)"`): on the tool events it runs only for the
    /// calls the rule selects, in the syntax of the file's `permissions`.
    pub fn condition(&self) -> Option<&PermissionRule> {
        self.condition.as_ref()
    }

    /// Whether it runs for `event` with the matched value `subject` (a tool name, the
    /// `SessionStart` source or the `SessionEnd` reason) and, on a tool event, the call's
    /// `tool_input`.
    pub(crate) fn selects(&self, event: SettingsEvent, subject: Option<&str>, tool_input: Option<&Value>) -> bool {
        self.event == event
            && subject.is_none_or(|subject| self.matcher.matches(subject))
            && match (&self.condition, subject, tool_input) {
                (Some(rule), Some(tool), Some(input)) => rule.selects(tool, input),
                _ => true,
            }
    }
}

impl fmt::Display for SettingsHook {
    /// `PreToolUse matcher=Bash command "./guard.sh" timeout=5s fails closed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} matcher={} command {:?} timeout={:?}", self.event, self.matcher, self.command, self.timeout)?;
        f.write_str(if self.fail_closed { " fails closed" } else { " fails open" })?;
        match &self.cannot_run {
            Some(why) if self.event == SettingsEvent::PreToolUse => {
                write!(f, "; cannot run ({why}), so it denies every call its matcher selects")
            }
            Some(why) => write!(f, "; cannot run ({why}), so its events go on without it"),
            None => Ok(()),
        }
    }
}
