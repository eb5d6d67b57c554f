//! [`SettingsHooks`]: the hooks and `permissions` rules of Claude Code-format settings files
//! (and plugin folders), as one value a runtime is given with
//! [`RuntimeBuilder::settings_hooks`](crate::RuntimeBuilder::settings_hooks).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use super::mcp_spec::McpServerSpec;
use super::{SettingsHook, SettingsPermissions, SettingsReport, SettingsState};
use crate::declarative::LoadErrors;

/// The hooks of one or more Claude Code-format settings files, with their `permissions` rules.
/// A type of its own, apart from the YAML hooks of a
/// [`DeclarativeHookRegistry`](crate::declarative::DeclarativeHookRegistry): the two formats
/// run at different places (a settings file acts on every thread of a runtime, YAML hooks on
/// the agents they are applied to), so neither can be handed where the other is expected.
///
/// Cloning is cheap (the hooks are shared).
///
/// ```
/// use hooks_runtime::Runtime;
/// use hooks_runtime::declarative::SettingsHooks;
///
/// let hooks = SettingsHooks::from_json(
///     r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#,
/// );
/// assert_eq!(hooks.hooks().len(), 1);
/// let runtime = Runtime::builder().settings_hooks(hooks).build().unwrap();
/// # let _ = runtime;
/// ```
#[derive(Clone, Default)]
pub struct SettingsHooks {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    hooks: Vec<SettingsHook>,
    permissions: SettingsPermissions,
    /// The MCP servers of a trusted `.mcp.json` ([`SettingsHooks::discover`]).
    mcp_servers: Vec<McpServerSpec>,
    /// What the hooks remember while a runtime runs them.
    state: SettingsState,
}

impl fmt::Debug for SettingsHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SettingsHooks")
            .field("hooks", &self.inner.hooks)
            .field("permissions", &self.inner.permissions)
            .field("mcp_servers", &self.inner.mcp_servers)
            .finish()
    }
}

impl SettingsHooks {
    /// Loads the `hooks` object of a Claude Code-format settings file (the whole file, whose
    /// other keys are ignored, or a bare `{"hooks": ...}`), and its `permissions` rules; never
    /// fails.
    ///
    /// Every problem is a WARN naming where it is and the field. An unknown field is ignored
    /// and its handler runs; an entry that cannot run as written (an unknown hook type, a
    /// command naming an unset variable, a bad value) never runs, and where it guards
    /// (`PreToolUse`) it denies every call its matcher selects, naming the entry. The hooks of
    /// an event this runtime has no counterpart for are reported and not kept. A document that
    /// is not such JSON loads nothing, with an ERROR. Use
    /// [`from_json_strict`](Self::from_json_strict) to refuse any of that.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// let hooks = SettingsHooks::from_json(r#"{
    ///   "permissions": {"allow": ["Bash(ls:*)"]},
    ///   "hooks": {
    ///     "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],
    ///     "PreCompact": [{"hooks": [{"type": "command", "command": "./save.sh"}]}]
    ///   }
    /// }"#);
    /// assert_eq!(hooks.hooks().len(), 1); // PreCompact has no counterpart: reported with a WARN
    /// ```
    pub fn from_json(json: &str) -> Self {
        Self::from_report(SettingsReport::from_json(json))
    }

    /// Loads a settings file's hooks, or returns every problem in it at once (for CI).
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// let errors = SettingsHooks::from_json_strict(
    ///     r#"{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "true", "tiemout": 5}]}]}}"#,
    /// )
    /// .unwrap_err();
    /// assert_eq!(errors.problems().len(), 2); // the matcher, and the field
    /// assert!(errors.problems()[0].to_string().starts_with("hooks.PreToolUse[0] (field `matcher`): not a valid regular expression"));
    /// assert!(errors.problems()[1].to_string().starts_with("hooks.PreToolUse[0].hooks[0] (field `tiemout`): unknown field, ignored"));
    /// ```
    pub fn from_json_strict(json: &str) -> Result<Self, LoadErrors> {
        Self::strict(SettingsReport::from_json(json))
    }

    /// Loads a Claude Code plugin folder's hooks ([`SettingsReport::from_plugin_dir`]), never
    /// failing: its problems are logged as [`from_json`](Self::from_json)'s. Combine it with
    /// the project's settings with [`with_hooks_of`](Self::with_hooks_of).
    pub fn from_plugin_dir(folder: &Path) -> Self {
        Self::from_report(SettingsReport::from_plugin_dir(folder))
    }

    /// Loads a plugin folder's hooks, or returns every problem in it at once.
    pub fn from_plugin_dir_strict(folder: &Path) -> Result<Self, LoadErrors> {
        Self::strict(SettingsReport::from_plugin_dir(folder))
    }

    /// The hooks of a validated settings file, logging its problems: ERROR for a rejected
    /// document, WARN for each other problem.
    pub fn from_report(report: SettingsReport) -> Self {
        let rejected = report.has_document_problem();
        for problem in &report.problems {
            if rejected {
                tracing::error!("settings hooks ignored, no hooks loaded: {problem}");
            } else {
                tracing::warn!("settings hooks: {problem}");
            }
        }
        Self::of(report.kept, report.permissions)
    }

    fn strict(mut report: SettingsReport) -> Result<Self, LoadErrors> {
        let permissions = std::mem::take(&mut report.permissions);
        report.into_strict().map(|hooks| Self::of(hooks, permissions))
    }

    fn of(hooks: Vec<SettingsHook>, permissions: SettingsPermissions) -> Self {
        Self::of_parts(hooks, permissions, Vec::new())
    }

    pub(super) fn of_parts(
        hooks: Vec<SettingsHook>,
        permissions: SettingsPermissions,
        mcp_servers: Vec<McpServerSpec>,
    ) -> Self {
        SettingsHooks { inner: Arc::new(Inner { hooks, permissions, mcp_servers, state: SettingsState::default() }) }
    }

    /// The MCP servers of a trusted `.mcp.json`, which
    /// `RuntimeBuilder::mcp_servers_from` (feature `mcp`) adds to a runtime.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// assert!(SettingsHooks::from_json(r#"{"hooks": {}}"#).mcp_servers().is_empty());
    /// ```
    pub fn mcp_servers(&self) -> &[McpServerSpec] {
        &self.inner.mcp_servers
    }

    /// These hooks and `permissions` rules followed by `other`'s: a project's settings file
    /// and its plugins, given to one runtime.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// let project = SettingsHooks::from_json(r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./a.sh"}]}]}}"#);
    /// let user = SettingsHooks::from_json(r#"{"permissions": {"deny": ["Bash(rm *)"]}, "hooks": {}}"#);
    /// let both = project.with_hooks_of(&user);
    /// assert_eq!(both.hooks().len(), 1);
    /// assert_eq!(both.permissions().deny.len(), 1);
    /// ```
    pub fn with_hooks_of(&self, other: &SettingsHooks) -> Self {
        let mut hooks = self.inner.hooks.clone();
        hooks.extend(other.inner.hooks.iter().cloned());
        let mut permissions = self.inner.permissions.clone();
        permissions.allow.extend(other.inner.permissions.allow.iter().cloned());
        permissions.ask.extend(other.inner.permissions.ask.iter().cloned());
        permissions.deny.extend(other.inner.permissions.deny.iter().cloned());
        let mut servers = self.inner.mcp_servers.clone();
        servers.extend(other.inner.mcp_servers.iter().cloned());
        Self::of_parts(hooks, permissions, servers)
    }

    /// These hooks with their commands run without the variables `names` of the runtime's
    /// environment (H3): an API key the application holds, say. Otherwise a command gets the
    /// runtime's whole environment, as Claude Code gives it (scripts expect `PATH`, `HOME` and
    /// the rest), plus `CLAUDE_PROJECT_DIR` (and `CLAUDE_PLUGIN_ROOT` for a plugin's hook).
    /// Names add up over calls; [`with_hooks_of`](Self::with_hooks_of) keeps each side's.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsHooks;
    ///
    /// let hooks = SettingsHooks::from_json(r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./notify.sh"}]}]}}"#)
    ///     .secret_env(["OPENAI_API_KEY", "DATABASE_URL"]);
    /// assert_eq!(hooks.hooks()[0].secret_env(), ["OPENAI_API_KEY", "DATABASE_URL"]);
    /// ```
    #[must_use]
    pub fn secret_env<I, S>(&self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let names: Vec<String> = names.into_iter().map(Into::into).collect();
        let hooks = self
            .inner
            .hooks
            .iter()
            .cloned()
            .map(|mut hook| {
                let mut secret: Vec<String> = hook.secret_env.to_vec();
                secret.extend(names.iter().filter(|name| !hook.secret_env.contains(name)).cloned());
                hook.secret_env = secret.into();
                hook
            })
            .collect();
        Self::of(hooks, self.inner.permissions.clone())
    }

    /// The hooks, by event name, then in file order.
    pub fn hooks(&self) -> &[SettingsHook] {
        &self.inner.hooks
    }

    /// The `permissions` rules, which govern every tool call of a runtime given these hooks.
    pub fn permissions(&self) -> &SettingsPermissions {
        &self.inner.permissions
    }

    /// Whether there is no hook and no `permissions` rule.
    pub fn is_empty(&self) -> bool {
        self.inner.hooks.is_empty() && self.inner.permissions.is_empty()
    }

    /// A warning for each hook group of a tool event whose matcher names none of `tools` (see
    /// [`SettingsReport::check_tools`]); `RuntimeBuilder::build` logs them for the runtime's
    /// tools.
    pub fn tool_warnings(&self, tools: &[&str]) -> Vec<String> {
        let mut report = SettingsReport { kept: self.inner.hooks.clone(), ..SettingsReport::default() };
        report.check_tools(tools);
        report.problems.iter().map(ToString::to_string).collect()
    }

    /// What the hooks remember while a runtime runs them.
    pub(crate) fn state(&self) -> &SettingsState {
        &self.inner.state
    }
}
