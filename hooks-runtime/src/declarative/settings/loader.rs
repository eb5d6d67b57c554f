//! A settings file's `hooks` object to [`SettingsHook`]s: one validation pass that keeps the
//! good hooks and lists every problem, naming where it is.

use std::fmt;
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::event::WITHOUT_COUNTERPART;
use super::variables::unset_variables;
use super::{
    DEFAULT_SETTINGS_HOOK_TIMEOUT, PermissionRule, RuleKind, SettingsEvent, SettingsHook, SettingsMatcher,
    SettingsPermissions,
};
use crate::declarative::MAX_DOCUMENT_BYTES;
use crate::declarative::problems::{self, DocumentFormat, LoadErrors, LoadProblem};

const GROUP_FIELDS: &str = "`matcher` or `hooks`";
const HOOK_FIELDS: &str = "`type`, `command`, `if`, `timeout`, `onFailure`, `async`, `once` or `statusMessage`";

/// What a settings file holds: the hooks kept and every problem, ordered by event name, then
/// as the file lists them within an event.
///
/// Every entry of a known event is kept. An unknown field is a problem and is ignored (the
/// handler runs without it); an entry that cannot run as written (an unknown hook type, a
/// command naming an unset variable, a bad value, an unreadable matcher) is kept with why
/// ([`SettingsHook::cannot_run`]): it never runs, and a `PreToolUse` one denies the calls its
/// matcher selects. An unknown event is a problem and its hooks are not kept. A document
/// problem (not JSON, not an object, no `hooks` object) keeps nothing. The `permissions` rules
/// are read ([`SettingsReport::permissions`]); other top-level keys are the settings file's own
/// (`env`, `model`, ...) and are ignored.
///
/// ```
/// use hooks_runtime::declarative::SettingsReport;
///
/// let report = SettingsReport::from_json(r#"{"permissions": {}, "hooks": {
///   "PreToolUse": [{"matcher": "Bash", "hooks": [
///     {"type": "command", "command": "./guard.sh"},
///     {"type": "prompt", "prompt": "Is this safe?"}
///   ]}]
/// }}"#);
/// assert_eq!(report.kept.len(), 2);
/// assert_eq!(
///     report.problems[0].to_string(),
///     "hooks.PreToolUse[0].hooks[1] (field `type`): hook type `prompt` is not supported here; only `command` and `http` hooks run"
/// );
/// // A guard that cannot run denies what its matcher selects, rather than vanish.
/// assert!(report.kept[1].cannot_run().is_some());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettingsReport {
    /// The hooks, those that cannot run as written included.
    pub kept: Vec<SettingsHook>,
    /// Every problem.
    pub problems: Vec<LoadProblem>,
    /// The file's `permissions` rules. A rule of `deny` or `ask` that cannot be read is a
    /// problem and still guards every call of the tool it names.
    pub permissions: SettingsPermissions,
}

impl SettingsReport {
    /// Parses and validates `json`; never fails or panics.
    pub fn from_json(json: &str) -> Self {
        match serde_json::from_str::<UniqueKeys>(json) {
            Ok(UniqueKeys(document)) => validate_document(&document, &Source::default()),
            Err(error) => SettingsReport {
                problems: vec![LoadProblem::document(None, format!("not valid JSON: {error}"))],
                ..Self::default()
            },
        }
    }

    /// Reads at most [`MAX_DOCUMENT_BYTES`] of UTF-8 from `reader`, then validates it as
    /// [`from_json`](Self::from_json) does; a read error is a document problem.
    pub fn from_reader(reader: impl Read) -> Self {
        let mut bytes = Vec::new();
        let problem = match reader.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes) {
            Err(error) => format!("could not be read: {error}"),
            Ok(_) if bytes.len() as u64 > MAX_DOCUMENT_BYTES => format!("larger than {MAX_DOCUMENT_BYTES} bytes"),
            Ok(_) => match String::from_utf8(bytes) {
                Ok(text) => return Self::from_json(&text),
                Err(error) => format!("not UTF-8: {error}"),
            },
        };
        SettingsReport { problems: vec![LoadProblem::document(None, problem)], ..Self::default() }
    }

    /// Reads a Claude Code plugin folder as that format's runner does: its manifest
    /// `.claude-plugin/plugin.json` (its `name`; its `hooks`, a path relative to the folder or
    /// an inline `{"hooks": ...}` object) and, by default, `hooks/hooks.json`. Its hooks'
    /// locations start `plugin:<name>:` and their commands run with `CLAUDE_PLUGIN_ROOT` set to
    /// `folder` (and `CLAUDE_PROJECT_DIR` to the working directory, the project's). A folder
    /// without a readable manifest or hooks file is a document problem.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsReport;
    ///
    /// let folder = std::env::temp_dir().join(format!("doc-plugin-{}", std::process::id()));
    /// std::fs::create_dir_all(folder.join(".claude-plugin")).unwrap();
    /// std::fs::create_dir_all(folder.join("hooks")).unwrap();
    /// std::fs::write(folder.join(".claude-plugin/plugin.json"), r#"{"name": "guards"}"#).unwrap();
    /// std::fs::write(folder.join("hooks/hooks.json"), r#"{"hooks": {"PreToolUse": [{"matcher": "Bash",
    ///   "hooks": [{"type": "command", "command": "node ${CLAUDE_PLUGIN_ROOT}/guard.js"}]}]}}"#).unwrap();
    /// let report = SettingsReport::from_plugin_dir(&folder);
    /// assert!(report.problems.is_empty(), "{:?}", report.problems);
    /// assert_eq!(report.kept[0].location(), "plugin:guards:hooks.PreToolUse[0].hooks[0]");
    /// assert_eq!(report.kept[0].plugin_root(), Some(folder.as_path()));
    /// # std::fs::remove_dir_all(&folder).unwrap();
    /// ```
    pub fn from_plugin_dir(folder: &std::path::Path) -> Self {
        let document_problem = |message: String| SettingsReport {
            problems: vec![LoadProblem::document(None, message)],
            ..Self::default()
        };
        let read = |path: &std::path::Path| -> Result<Value, String> {
            let file =
                std::fs::File::open(path).map_err(|error| format!("{} could not be read: {error}", path.display()))?;
            let mut text = String::new();
            file.take(MAX_DOCUMENT_BYTES + 1)
                .read_to_string(&mut text)
                .map_err(|error| format!("{} could not be read: {error}", path.display()))?;
            serde_json::from_str::<UniqueKeys>(&text)
                .map(|UniqueKeys(value)| value)
                .map_err(|error| format!("{} is not valid JSON: {error}", path.display()))
        };
        let manifest_path = folder.join(".claude-plugin").join("plugin.json");
        let manifest = match read(&manifest_path) {
            Ok(Value::Object(manifest)) => manifest,
            Ok(_) => return document_problem(format!("{} is not a JSON object", manifest_path.display())),
            Err(error) => return document_problem(format!("not a plugin folder: {error}")),
        };
        let Some(name) = manifest.get("name").and_then(Value::as_str).filter(|name| !name.trim().is_empty()) else {
            return document_problem(format!("{} has no `name`", manifest_path.display()));
        };
        let document = match manifest.get("hooks") {
            Some(Value::Object(inline)) => Value::Object(inline.clone()),
            Some(Value::String(path)) => {
                let relative = path.replace("${CLAUDE_PLUGIN_ROOT}", &folder.to_string_lossy());
                match read(&folder.join(relative)) {
                    Ok(document) => document,
                    Err(error) => return document_problem(error),
                }
            }
            _ => match read(&folder.join("hooks").join("hooks.json")) {
                Ok(document) => document,
                Err(error) => return document_problem(error),
            },
        };
        let source = Source {
            plugin_root: Some(folder.to_path_buf()),
            prefix: format!("plugin:{}:", shown(name)),
            ..Source::default()
        };
        validate_document(&document, &source)
    }

    /// Adds a problem for each group of a tool event whose matcher names none of `tools` (the
    /// runtime's tool names): its hooks would never run. Matchers are case-sensitive, as in
    /// Claude Code; a name that differs from a tool only in case is pointed out.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsReport;
    ///
    /// let mut report = SettingsReport::from_json(r#"{"hooks": {"PreToolUse": [
    ///   {"matcher": "Refund", "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#);
    /// report.check_tools(&["refund", "lookup"]);
    /// assert_eq!(
    ///     report.problems[0].to_string(),
    ///     "hooks.PreToolUse[0] (field `matcher`): `Refund` names none of the tools (`refund`, `lookup`), so its hooks never run; matchers are case-sensitive: did you mean `refund`?"
    /// );
    /// ```
    pub fn check_tools(&mut self, tools: &[&str]) {
        let mut seen: Vec<&str> = Vec::new();
        for hook in &self.kept {
            let Some(group) = hook.location.rsplit_once(".hooks[").map(|(group, _)| group) else { continue };
            if !hook.event.is_tool_event()
                || seen.contains(&group)
                || tools.iter().any(|tool| hook.matcher.matches(tool))
            {
                continue;
            }
            seen.push(group);
            let pattern = hook.matcher.pattern();
            let listed = tools.iter().map(|tool| format!("`{}`", shown(tool))).collect::<Vec<_>>().join(", ");
            let near: Vec<&&str> =
                tools.iter().filter(|tool| pattern.split('|').any(|name| name.eq_ignore_ascii_case(tool))).collect();
            let hint = match near.first() {
                Some(tool) => format!("; matchers are case-sensitive: did you mean `{}`?", shown(tool)),
                None => String::new(),
            };
            self.problems.push(LoadProblem::at_path(
                group,
                Some("matcher"),
                format!("`{}` names none of the tools ({listed}), so its hooks never run{hint}", shown(pattern)),
            ));
        }
    }

    /// The file's `permissions` rules, one line each, as `hooks check` lists them: the id a
    /// decision names (`settings:permissions.deny[0]`), the rule, and what it does to the calls
    /// it selects.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsReport;
    ///
    /// let report = SettingsReport::from_json(
    ///     r#"{"permissions": {"allow": ["Bash(git status)"], "deny": ["Bash(rm:*)"]}, "hooks": {}}"#,
    /// );
    /// assert_eq!(
    ///     report.permission_lines(),
    ///     [
    ///         "settings:permissions.allow[0] Bash(git status): runs without the tool's own approval",
    ///         "settings:permissions.deny[0] Bash(rm:*): never runs",
    ///     ]
    /// );
    /// ```
    pub fn permission_lines(&self) -> Vec<String> {
        let lists = [
            ("allow", &self.permissions.allow, "runs without the tool's own approval"),
            ("ask", &self.permissions.ask, "waits for a person's approval"),
            ("deny", &self.permissions.deny, "never runs"),
        ];
        lists
            .into_iter()
            .flat_map(|(kind, rules, effect)| {
                rules
                    .iter()
                    .enumerate()
                    .map(move |(index, rule)| format!("settings:permissions.{kind}[{index}] {rule}: {effect}"))
            })
            .collect()
    }

    /// Whether `text` is a document of this format: JSON whose top level is an object with a
    /// `hooks` object. The `hooks` command-line tool tells the two formats apart with it.
    ///
    /// ```
    /// use hooks_runtime::declarative::SettingsReport;
    ///
    /// assert!(SettingsReport::is_settings_document(r#"{"hooks": {}}"#));
    /// assert!(!SettingsReport::is_settings_document("hooks:\n  - event: preToolUse\n"));
    /// ```
    pub fn is_settings_document(text: &str) -> bool {
        matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(root)) if root.get("hooks").is_some_and(Value::is_object))
    }

    /// Whether the document was refused as a whole, so nothing was kept.
    pub fn has_document_problem(&self) -> bool {
        self.problems.iter().any(LoadProblem::is_document_problem)
    }

    /// The kept hooks if there was no problem, else every problem.
    pub fn into_strict(self) -> Result<Vec<SettingsHook>, LoadErrors> {
        if self.problems.is_empty() { Ok(self.kept) } else { Err(LoadErrors::new("settings hooks", self.problems)) }
    }
}

/// Where a document comes from: a settings file, or a plugin's hooks file, whose commands run
/// with `CLAUDE_PLUGIN_ROOT` and whose locations start `plugin:<name>:`.
#[derive(Default)]
pub(super) struct Source {
    pub(super) plugin_root: Option<PathBuf>,
    pub(super) prefix: String,
    /// A discovered settings file, whose commands run in its project folder.
    pub(super) project_dir: Option<PathBuf>,
    /// A discovered settings file may hold only `permissions` (or nothing this runtime reads):
    /// no `hooks` object is then no problem.
    pub(super) hooks_optional: bool,
}

/// Parses a settings document, refusing an object with a repeated key (see [`UniqueKeys`]).
pub(super) fn parse_document(text: &str) -> Result<Value, String> {
    serde_json::from_str::<UniqueKeys>(text)
        .map(|UniqueKeys(value)| value)
        .map_err(|error| format!("not valid JSON: {error}"))
}

pub(super) fn validate_document(document: &Value, source: &Source) -> SettingsReport {
    let mut report = SettingsReport::default();
    let Value::Object(root) = document else {
        report.problems.push(LoadProblem::document(
            None,
            format!("expected an object with a `hooks` object, found {}", describe(document)),
        ));
        return report;
    };
    if let Some(permissions) = root.get("permissions") {
        validate_permissions(permissions, &mut report);
    }
    let events = match root.get("hooks") {
        Some(Value::Object(events)) => events,
        None if source.hooks_optional => return report,
        None => {
            report.problems.push(LoadProblem::document(
                None,
                "no `hooks` object; expected `{\"hooks\": {\"PreToolUse\": [...]}}`",
            ));
            return report;
        }
        Some(other) => {
            report.problems.push(LoadProblem::document(
                None,
                format!("`hooks` must be an object of events, found {}", describe(other)),
            ));
            return report;
        }
    };
    for (name, groups) in events {
        let location = format!("{}hooks.{}", source.prefix, shown(name));
        let Some(event) = SettingsEvent::from_name(name) else {
            let message = if WITHOUT_COUNTERPART.contains(&name.as_str()) {
                format!("the event `{name}` has no counterpart in this runtime, so its hooks never run; remove them")
            } else {
                let known = SettingsEvent::ALL.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ");
                format!("unknown event `{name}`; expected one of {known} (names are case-sensitive)")
            };
            report.problems.push(LoadProblem::at_path(&location, None, message));
            continue;
        };
        let Value::Array(groups) = groups else {
            report.problems.push(LoadProblem::at_path(
                &location,
                None,
                format!("expected a list of matcher groups, found {}", describe(groups)),
            ));
            continue;
        };
        for (index, group) in groups.iter().enumerate() {
            validate_group(event, &format!("{location}[{index}]"), group, source, &mut report);
        }
    }
    report
}

fn validate_group(event: SettingsEvent, location: &str, group: &Value, source: &Source, report: &mut SettingsReport) {
    let Value::Object(fields) = group else {
        report.problems.push(LoadProblem::at_path(
            location,
            None,
            format!("expected an object with {GROUP_FIELDS}, found {}", describe(group)),
        ));
        return;
    };
    // An unknown field is ignored, as the format's own runner ignores it: the group still runs.
    for key in fields.keys().filter(|key| !matches!(key.as_str(), "matcher" | "hooks")) {
        report.problems.push(LoadProblem::at_path(
            location,
            Some(&shown(key)),
            format!("unknown field, ignored; expected {GROUP_FIELDS}"),
        ));
    }
    // A matcher that cannot be read selects nothing we can know: its hooks cannot run, and a
    // guard among them denies every call rather than vanish.
    let (matcher, matcher_problem) = match fields.get("matcher") {
        None | Some(Value::Null) => (SettingsMatcher::all(), None),
        Some(Value::String(pattern)) => match SettingsMatcher::new(pattern.as_str()) {
            Ok(matcher) => (matcher, None),
            Err(error) => {
                let error = error.to_string().lines().last().unwrap_or_default().trim().to_owned();
                (SettingsMatcher::all(), Some(format!("not a valid regular expression: {error}")))
            }
        },
        Some(other) => (SettingsMatcher::all(), Some(format!("expected a string, found {}", describe(other)))),
    };
    if let Some(message) = &matcher_problem {
        report.problems.push(LoadProblem::at_path(location, Some("matcher"), message.clone()));
    }
    let hooks = match fields.get("hooks") {
        Some(Value::Array(hooks)) => hooks,
        None | Some(Value::Null) => {
            report.problems.push(LoadProblem::at_path(location, Some("hooks"), "missing; expected a list of hooks"));
            return;
        }
        Some(other) => {
            report.problems.push(LoadProblem::at_path(
                location,
                Some("hooks"),
                format!("expected a list of hooks, found {}", describe(other)),
            ));
            return;
        }
    };
    let group_problem = matcher_problem.map(|message| format!("its group's `matcher` is {message}"));
    for (index, hook) in hooks.iter().enumerate() {
        let location = format!("{location}.hooks[{index}]");
        let hook = validate_hook(event, &matcher, group_problem.as_deref(), &location, hook, source, report);
        report.kept.push(hook);
    }
}

/// One hook entry. It is always kept: one that cannot run as written carries why
/// ([`SettingsHook::cannot_run`]), so that a guard among such entries fails closed.
fn validate_hook(
    event: SettingsEvent,
    matcher: &SettingsMatcher,
    group_problem: Option<&str>,
    location: &str,
    hook: &Value,
    source: &Source,
    report: &mut SettingsReport,
) -> SettingsHook {
    let mut entry = SettingsHook {
        event,
        matcher: matcher.clone(),
        command: String::new(),
        timeout: DEFAULT_SETTINGS_HOOK_TIMEOUT,
        fail_closed: false,
        location: location.to_owned(),
        cannot_run: group_problem.map(str::to_owned),
        condition: None,
        plugin_root: source.plugin_root.clone(),
        run_async: false,
        once: false,
        http: None,
        secret_env: std::sync::Arc::from([]),
        project_dir: source.project_dir.clone(),
    };
    let Value::Object(fields) = hook else {
        let message = format!("expected an object with {HOOK_FIELDS}, found {}", describe(hook));
        report.problems.push(LoadProblem::at_path(location, None, message.clone()));
        entry.cannot_run.get_or_insert(message);
        return entry;
    };
    // Why it cannot run, first problem first; every problem is reported.
    let mut fatal: Vec<String> = Vec::new();
    let mut problem = |field: &str, message: String, stops_it: bool| {
        if stops_it {
            fatal.push(format!("`{field}`: {message}"));
        }
        report.problems.push(LoadProblem::at_path(location, Some(field), message));
    };
    let kind = match fields.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        None | Some(Value::Null) => {
            problem("type", "missing; expected `command`".to_owned(), true);
            ""
        }
        Some(other) => {
            problem("type", format!("expected the string `command`, found {}", describe(other)), true);
            ""
        }
    };
    match kind {
        "command" | "http" | "" => {}
        "prompt" | "agent" | "mcp_tool" => problem(
            "type",
            format!("hook type `{kind}` is not supported here; only `command` and `http` hooks run"),
            true,
        ),
        other => problem("type", format!("unknown hook type `{}`; expected `command`", shown(other)), true),
    }
    if kind != "command" && kind != "http" {
        // A hook of another type has fields of its own: its type is the one thing to say.
        entry.cannot_run.get_or_insert_with(|| fatal.join("; "));
        return entry;
    }
    let own = |key: &str| match kind {
        "http" => matches!(key, "url" | "headers" | "allowedEnvVars"),
        _ => key == "command",
    };
    let known = |key: &str| {
        own(key) || matches!(key, "type" | "if" | "timeout" | "onFailure" | "async" | "once" | "statusMessage")
    };
    for key in fields.keys().filter(|key| !known(key)) {
        // Claude Code ignores a field it does not know, and so does this runtime: the
        // handler runs without it.
        problem(&shown(key), format!("unknown field, ignored; expected {HOOK_FIELDS}"), false);
    }
    if kind == "http" {
        match fields.get("url") {
            Some(Value::String(url)) => match super::http::HttpTarget::parse(url) {
                Ok(parsed) => {
                    entry.command = url.clone();
                    entry.http = Some(super::http::HttpTarget {
                        url: parsed,
                        headers: Vec::new(),
                        allowed_env_vars: Vec::new(),
                    });
                }
                Err(error) => problem("url", error, true),
            },
            None | Some(Value::Null) => problem("url", "missing".to_owned(), true),
            Some(other) => problem("url", format!("expected a string, found {}", describe(other)), true),
        }
        let mut headers = Vec::new();
        match fields.get("headers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (name, value) in map {
                    match value {
                        Value::String(value)
                            if !name.is_empty() && name.chars().all(|c| c.is_ascii_graphic() && c != ':') =>
                        {
                            headers.push((name.clone(), value.clone()))
                        }
                        _ => problem(
                            "headers",
                            format!("`{}` must be a header name with a string value", shown(name)),
                            true,
                        ),
                    }
                }
            }
            Some(other) => problem("headers", format!("expected an object, found {}", describe(other)), true),
        }
        let mut allowed = Vec::new();
        match fields.get("allowedEnvVars") {
            None | Some(Value::Null) => {}
            Some(Value::Array(names)) if names.iter().all(Value::is_string) => {
                allowed = names.iter().filter_map(Value::as_str).map(str::to_owned).collect();
            }
            Some(other) => {
                problem("allowedEnvVars", format!("expected a list of names, found {}", describe(other)), true)
            }
        }
        if let Some(target) = &mut entry.http {
            target.headers = headers;
            target.allowed_env_vars = allowed;
        }
    } else {
        match fields.get("command") {
            Some(Value::String(command)) if command.trim().is_empty() => {
                problem("command", "empty; give the command to run".to_owned(), true)
            }
            Some(Value::String(command)) => {
                let provided = |name: &str| {
                    name == "CLAUDE_PROJECT_DIR" || (name == "CLAUDE_PLUGIN_ROOT" && source.plugin_root.is_some())
                };
                for name in unset_variables(command, &provided) {
                    problem(
                        "command",
                        format!("names the variable `{name}`, which is not set here (it would expand to nothing)"),
                        true,
                    );
                }
                entry.command = command.clone();
            }
            None | Some(Value::Null) => problem("command", "missing".to_owned(), true),
            Some(other) => problem("command", format!("expected a string, found {}", describe(other)), true),
        }
    }
    for key in ["async", "once"] {
        match fields.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(on)) if key == "async" => entry.run_async = *on,
            Some(Value::Bool(on)) => entry.once = *on,
            Some(other) => problem(key, format!("expected `true` or `false`, found {}", describe(other)), true),
        }
    }
    match fields.get("if") {
        None | Some(Value::Null) => {}
        Some(Value::String(rule)) if event.is_tool_event() => match PermissionRule::parse(rule) {
            Ok(rule) => entry.condition = Some(rule),
            Err(error) => problem("if", format!("not a rule in the `Tool(pattern)` syntax: {error}"), true),
        },
        Some(Value::String(_)) => {
            problem("if", "only the tool events use `if`; ignored".to_owned(), false);
        }
        Some(other) => problem("if", format!("expected a rule such as `Bash(git *)`, found {}", describe(other)), true),
    }
    match fields.get("timeout") {
        None | Some(Value::Null) => {}
        Some(Value::Number(seconds)) => match seconds.as_f64().filter(|s| *s > 0.0).map(Duration::try_from_secs_f64) {
            Some(Ok(timeout)) => entry.timeout = timeout,
            _ => problem("timeout", format!("expected a positive number of seconds, found `{seconds}`"), true),
        },
        Some(other) => problem("timeout", format!("expected a number of seconds, found {}", describe(other)), true),
    }
    match fields.get("onFailure") {
        None | Some(Value::Null) => {}
        Some(Value::String(mode)) if mode == "block" => entry.fail_closed = true,
        Some(Value::String(mode)) if mode == "continue" => {}
        Some(other) => problem("onFailure", format!("expected `block` or `continue`, found {}", describe(other)), true),
    }
    if let Some(status) = fields.get("statusMessage").filter(|v| !v.is_string() && !v.is_null()) {
        problem("statusMessage", format!("expected a string, found {}", describe(status)), false);
    }
    if entry.cannot_run.is_none() && !fatal.is_empty() {
        entry.cannot_run = Some(fatal.join("; "));
    }
    entry
}

fn validate_permissions(permissions: &Value, report: &mut SettingsReport) {
    let Value::Object(lists) = permissions else {
        report.problems.push(LoadProblem::at_path(
            "permissions",
            None,
            format!("expected an object of `allow`, `ask` and `deny` lists, found {}", describe(permissions)),
        ));
        return;
    };
    // Its other keys (`defaultMode`, `additionalDirectories`, ...) are the format's own, with no
    // counterpart here.
    for kind in [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny] {
        let location = format!("permissions.{}", kind.name());
        let rules = match lists.get(kind.name()) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(rules)) => rules,
            Some(other) => {
                let message = format!("expected a list of rules, found {}", describe(other));
                report.problems.push(LoadProblem::at_path(&location, None, message));
                continue;
            }
        };
        for (index, rule) in rules.iter().enumerate() {
            let location = format!("{location}[{index}]");
            let Value::String(text) = rule else {
                let message = format!("expected a rule such as `Bash(git push:*)`, found {}", describe(rule));
                report.problems.push(LoadProblem::at_path(&location, None, message));
                continue;
            };
            match PermissionRule::parse(text) {
                Ok(rule) => report.permissions.list_mut(kind).push(rule),
                Err(error) => {
                    let guard = (kind != RuleKind::Allow).then(|| SettingsPermissions::whole_tool(text)).flatten();
                    let then = match &guard {
                        Some(_) => "; it applies to every call of its tool",
                        None => "; ignored",
                    };
                    report.problems.push(LoadProblem::at_path(
                        &location,
                        None,
                        format!("`{}`: {error}{then}", shown(text)),
                    ));
                    report.permissions.list_mut(kind).extend(guard);
                }
            }
        }
    }
}

/// `text` for a message: control characters escaped, at most 40 characters.
fn shown(text: &str) -> String {
    let cut: String = text.chars().take(40).collect();
    let escaped: String = cut.escape_debug().collect();
    if text.chars().count() > 40 { format!("{escaped}...") } else { escaped }
}

fn describe(value: &Value) -> String {
    problems::describe(value, DocumentFormat::Json)
}

/// A JSON value whose objects have no repeated key. Plain `Value` parsing keeps the last of two
/// equal keys, so a second `"PreToolUse"` (two files pasted together) would silently remove
/// the first one's guards; here it is an error naming the key and the line.
struct UniqueKeys(Value);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeysVisitor).map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let UniqueKeys(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(format!(
                    "the key `{key}` appears twice in one object (the second would silently replace the first); merge them"
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}
