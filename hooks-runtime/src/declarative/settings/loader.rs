//! A settings file's `hooks` object to [`SettingsHook`]s: one validation pass that keeps the
//! good hooks and lists every problem, naming where it is.

use std::fmt;
use std::io::Read;
use std::time::Duration;

use serde_json::{Map, Value};

use super::event::WITHOUT_COUNTERPART;
use super::{DEFAULT_SETTINGS_HOOK_TIMEOUT, SettingsEvent, SettingsHook, SettingsMatcher};
use crate::declarative::MAX_DOCUMENT_BYTES;
use crate::declarative::problems::{render_problems, write_problem};

const GROUP_FIELDS: &str = "`matcher` or `hooks`";
const HOOK_FIELDS: &str = "`type`, `command`, `timeout`, `onFailure` or `statusMessage`";

/// One thing wrong with a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettingsProblem {
    /// Where: a path into the file such as `hooks.PreToolUse[0].hooks[1]`; `None` for the
    /// document as a whole.
    pub location: Option<String>,
    /// The field at fault within `location`, if one is.
    pub field: Option<String>,
    /// What is wrong, and what was expected.
    pub message: String,
}

impl SettingsProblem {
    fn at(location: &str, field: Option<&str>, message: impl Into<String>) -> Self {
        SettingsProblem {
            location: Some(location.to_owned()),
            field: field.map(str::to_owned),
            message: message.into(),
        }
    }

    fn document(message: impl Into<String>) -> Self {
        SettingsProblem { location: None, field: None, message: message.into() }
    }
}

impl fmt::Display for SettingsProblem {
    /// ``hooks.PreToolUse[0].hooks[1] (field `type`): ...``, or `document: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_problem(f, self.location.as_deref().unwrap_or("document"), self.field.as_deref(), &self.message)
    }
}

/// Every problem of a settings file, from
/// [`from_settings_json_strict`](crate::declarative::DeclarativeHookRegistry::from_settings_json_strict).
/// Its `Debug` is its `Display`, the list of problems.
///
/// ```
/// use hooks_runtime::declarative::DeclarativeHookRegistry;
///
/// let errors = DeclarativeHookRegistry::from_settings_json_strict(
///     r#"{"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]}}"#,
/// )
/// .unwrap_err();
/// assert!(errors.to_string().starts_with("1 problem in settings hooks\n  hooks.Notification: "));
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render_problems("settings hooks", problems))]
pub struct SettingsErrors {
    problems: Vec<SettingsProblem>,
}

impl SettingsErrors {
    /// The problems, ordered as [`SettingsReport::problems`].
    pub fn problems(&self) -> &[SettingsProblem] {
        &self.problems
    }
}

impl fmt::Debug for SettingsErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// What a settings file holds: the hooks kept and every problem, ordered by event name, then
/// as the file lists them within an event.
///
/// A hook or group with a problem is left out; the rest load. A document problem (not JSON,
/// not an object, no `hooks` object) keeps nothing. Top-level keys other than `hooks` are the
/// settings file's own (`permissions`, `env`, ...) and are ignored.
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
/// assert_eq!(report.kept.len(), 1);
/// assert_eq!(
///     report.problems[0].to_string(),
///     "hooks.PreToolUse[0].hooks[1] (field `type`): hook type `prompt` is not supported here; only `command` hooks run"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettingsReport {
    /// The valid hooks.
    pub kept: Vec<SettingsHook>,
    /// Every problem.
    pub problems: Vec<SettingsProblem>,
}

impl SettingsReport {
    /// Parses and validates `json`; never fails or panics.
    pub fn from_json(json: &str) -> Self {
        match serde_json::from_str::<UniqueKeys>(json) {
            Ok(UniqueKeys(document)) => validate_document(&document),
            Err(error) => SettingsReport {
                problems: vec![SettingsProblem::document(format!("not valid JSON: {error}"))],
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
        SettingsReport { problems: vec![SettingsProblem::document(problem)], ..Self::default() }
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
        self.problems.iter().any(|problem| problem.location.is_none())
    }

    /// The kept hooks if there was no problem, else every problem.
    pub fn into_strict(self) -> Result<Vec<SettingsHook>, SettingsErrors> {
        if self.problems.is_empty() { Ok(self.kept) } else { Err(SettingsErrors { problems: self.problems }) }
    }
}

fn validate_document(document: &Value) -> SettingsReport {
    let mut report = SettingsReport::default();
    let Value::Object(root) = document else {
        report.problems.push(SettingsProblem::document(format!(
            "expected an object with a `hooks` object, found {}",
            describe(document)
        )));
        return report;
    };
    let events = match root.get("hooks") {
        Some(Value::Object(events)) => events,
        None => {
            report
                .problems
                .push(SettingsProblem::document("no `hooks` object; expected `{\"hooks\": {\"PreToolUse\": [...]}}`"));
            return report;
        }
        Some(other) => {
            report.problems.push(SettingsProblem::document(format!(
                "`hooks` must be an object of events, found {}",
                describe(other)
            )));
            return report;
        }
    };
    for (name, groups) in events {
        let location = format!("hooks.{name}");
        let Some(event) = SettingsEvent::from_name(name) else {
            let message = if WITHOUT_COUNTERPART.contains(&name.as_str()) {
                format!("the event `{name}` has no counterpart in this runtime, so its hooks never run; remove them")
            } else {
                let known = SettingsEvent::ALL.iter().map(|e| format!("`{e}`")).collect::<Vec<_>>().join(", ");
                format!("unknown event `{name}`; expected one of {known} (names are case-sensitive)")
            };
            report.problems.push(SettingsProblem::at(&location, None, message));
            continue;
        };
        let Value::Array(groups) = groups else {
            report.problems.push(SettingsProblem::at(
                &location,
                None,
                format!("expected a list of matcher groups, found {}", describe(groups)),
            ));
            continue;
        };
        for (index, group) in groups.iter().enumerate() {
            validate_group(event, &format!("{location}[{index}]"), group, &mut report);
        }
    }
    report
}

fn validate_group(event: SettingsEvent, location: &str, group: &Value, report: &mut SettingsReport) {
    let Value::Object(fields) = group else {
        report.problems.push(SettingsProblem::at(
            location,
            None,
            format!("expected an object with {GROUP_FIELDS}, found {}", describe(group)),
        ));
        return;
    };
    let before = report.problems.len();
    for key in fields.keys().filter(|key| !matches!(key.as_str(), "matcher" | "hooks")) {
        report.problems.push(SettingsProblem::at(
            location,
            Some(key),
            format!("unknown field; expected {GROUP_FIELDS}"),
        ));
    }
    let matcher = match fields.get("matcher") {
        None | Some(Value::Null) => Some(SettingsMatcher::all()),
        Some(Value::String(pattern)) => match SettingsMatcher::new(pattern.as_str()) {
            Ok(matcher) => Some(matcher),
            Err(error) => {
                let error = error.to_string().lines().last().unwrap_or_default().trim().to_owned();
                report.problems.push(SettingsProblem::at(
                    location,
                    Some("matcher"),
                    format!("not a valid regular expression: {error}"),
                ));
                None
            }
        },
        Some(other) => {
            report.problems.push(SettingsProblem::at(
                location,
                Some("matcher"),
                format!("expected a string, found {}", describe(other)),
            ));
            None
        }
    };
    let hooks = match fields.get("hooks") {
        Some(Value::Array(hooks)) => Some(hooks),
        None | Some(Value::Null) => {
            report.problems.push(SettingsProblem::at(location, Some("hooks"), "missing; expected a list of hooks"));
            None
        }
        Some(other) => {
            report.problems.push(SettingsProblem::at(
                location,
                Some("hooks"),
                format!("expected a list of hooks, found {}", describe(other)),
            ));
            None
        }
    };
    // A group with a problem of its own keeps none of its hooks: its matcher decides which
    // tools they guard, and a guard must not widen or vanish silently.
    let (Some(matcher), Some(hooks)) = (matcher, hooks) else { return };
    if report.problems.len() > before {
        return;
    }
    for (index, hook) in hooks.iter().enumerate() {
        let location = format!("{location}.hooks[{index}]");
        if let Some(hook) = validate_hook(event, &matcher, &location, hook, report) {
            report.kept.push(hook);
        }
    }
}

fn validate_hook(
    event: SettingsEvent,
    matcher: &SettingsMatcher,
    location: &str,
    hook: &Value,
    report: &mut SettingsReport,
) -> Option<SettingsHook> {
    let Value::Object(fields) = hook else {
        report.problems.push(SettingsProblem::at(
            location,
            None,
            format!("expected an object with {HOOK_FIELDS}, found {}", describe(hook)),
        ));
        return None;
    };
    // A hook of another type has fields of its own: its type is the one thing to say.
    let kind_problem = match fields.get("type") {
        Some(Value::String(kind)) if kind == "command" => None,
        Some(Value::String(kind)) if matches!(kind.as_str(), "prompt" | "agent" | "http" | "mcp_tool") => {
            Some(format!("hook type `{kind}` is not supported here; only `command` hooks run"))
        }
        Some(Value::String(kind)) => Some(format!("unknown hook type `{kind}`; expected `command`")),
        None | Some(Value::Null) => Some("missing; expected `command`".to_owned()),
        Some(other) => Some(format!("expected the string `command`, found {}", describe(other))),
    };
    if let Some(message) = kind_problem {
        report.problems.push(SettingsProblem::at(location, Some("type"), message));
        return None;
    }
    let mut problems = Vec::new();
    let mut problem = |field: &str, message: String| problems.push(SettingsProblem::at(location, Some(field), message));
    for key in fields.keys() {
        if !matches!(key.as_str(), "type" | "command" | "timeout" | "onFailure" | "statusMessage") {
            problem(key, format!("unknown field; expected {HOOK_FIELDS}"));
        }
    }
    let command = string_field(fields, "command", &mut problem);
    if command.as_deref().is_some_and(|command| command.trim().is_empty()) {
        problem("command", "empty; give the command to run".to_owned());
    }
    let timeout = match fields.get("timeout") {
        None | Some(Value::Null) => Some(DEFAULT_SETTINGS_HOOK_TIMEOUT),
        Some(Value::Number(seconds)) => match seconds.as_f64().filter(|s| *s > 0.0).map(Duration::try_from_secs_f64) {
            Some(Ok(timeout)) => Some(timeout),
            _ => {
                problem("timeout", format!("expected a positive number of seconds, found `{seconds}`"));
                None
            }
        },
        Some(other) => {
            problem("timeout", format!("expected a number of seconds, found {}", describe(other)));
            None
        }
    };
    let fail_closed = match fields.get("onFailure") {
        None | Some(Value::Null) => Some(false),
        Some(Value::String(mode)) if mode == "block" => Some(true),
        Some(Value::String(mode)) if mode == "continue" => Some(false),
        Some(other) => {
            problem("onFailure", format!("expected `block` or `continue`, found {}", describe(other)));
            None
        }
    };
    if let Some(status) = fields.get("statusMessage").filter(|v| !v.is_string() && !v.is_null()) {
        problem("statusMessage", format!("expected a string, found {}", describe(status)));
    }
    let failed = !problems.is_empty();
    report.problems.append(&mut problems);
    if failed {
        return None;
    }
    Some(SettingsHook {
        event,
        matcher: matcher.clone(),
        command: command?,
        timeout: timeout?,
        fail_closed: fail_closed?,
        location: location.to_owned(),
    })
}

fn string_field(fields: &Map<String, Value>, key: &str, problem: &mut impl FnMut(&str, String)) -> Option<String> {
    match fields.get(key) {
        Some(Value::String(text)) => Some(text.clone()),
        None | Some(Value::Null) => {
            problem(key, "missing".to_owned());
            None
        }
        Some(other) => {
            problem(key, format!("expected a string, found {}", describe(other)));
            None
        }
    }
}

fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("the string {:?}...", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
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
