//! YAML to hooks: one validation pass that keeps the good entries and lists every problem.
//!
//! The document is first parsed into an untyped value, then validated entry by entry, so a bad
//! entry costs only itself. The lenient loader logs the problems and keeps the rest; the strict
//! loader turns any problem into an error. Both read the same [`LoadReport`].

use std::io::Read;

use serde_json::{Map, Value};

use super::problems::{self, DocumentFormat, LoadErrors, LoadProblem};
use super::substitution::placeholders;
use super::{CommandMode, HookAction, HookConfig, HookEvent, HookMatcher};

/// Largest document [`LoadReport::from_reader`] reads, in bytes. Hook files are tiny; this
/// bounds what a mistaken path (a log file, a device) can cost.
pub const MAX_DOCUMENT_BYTES: u64 = 8 * 1024 * 1024;

/// Most YAML nodes (scalars, lists and mappings) a document may hold; a hook written out in
/// full takes about 11. Together with the parser's other limits (nesting depth, aliases) this
/// keeps hostile input cheap to reject.
pub const MAX_DOCUMENT_NODES: usize = 500_000;

/// Most YAML events that aliases may replay in one document. An anchor reused in a hooks file
/// (one action for several events) replays tens of events; the parser's default of a million
/// lets an alias bomb expand a million nodes before it is refused, seconds of work in a debug
/// build.
pub const MAX_ALIAS_REPLAYED_EVENTS: usize = 50_000;

/// Placeholders whose values someone other than the file's author chooses: the model (`tool`,
/// `args`), a tool or the runtime (`error`, `result`).
const UNTRUSTED_PLACEHOLDERS: [&str; 4] = ["tool", "error", "args", "result"];

const ENTRY_FIELDS: &str = "`event`, `matcher` or `action`";

/// A hook kept from a document, with its index in the `hooks` list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeptHook {
    /// Index of the entry in the `hooks` list.
    pub index: usize,
    /// The hook.
    pub config: HookConfig,
}

/// The outcome of validating a hooks document: what was kept, everything that was wrong, and
/// advice about what was kept.
///
/// An entry with any problem is left out of `kept`; every problem of it is listed. A document
/// problem (unparseable, not a mapping, no `hooks` list) leaves `kept` empty; an unknown
/// top-level key is listed and skips nothing. A warning skips
/// nothing: it points at a hook that is kept but probably not what its author meant (a matcher
/// on an event that ignores it, an empty matcher, a shell-mode command that splices in
/// `${tool}`, a safe-mode one that hands it to bash arithmetic), or at an empty document. The loaders log warnings at WARN; `hooks check --strict`
/// fails on them, [`into_strict`](Self::into_strict) does not.
///
/// ```
/// use hooks_runtime::declarative::LoadReport;
///
/// let report = LoadReport::from_yaml(
///     "hooks:\n  - event: preToolUse\n    action: {type: log, message: hi}\n  - event: never\n    action: {type: email}\n",
/// );
/// assert_eq!(report.kept.len(), 1);
/// assert_eq!(report.skipped_entries(), vec![1]);
/// assert_eq!(report.problems[0].to_string(), "entry #1 (field `event`): unknown event `never`; expected one of `preToolUse`, `postToolUse`, `onError`, `onStart`, `onStop` (or the UPPER_SNAKE spelling)");
/// assert_eq!(report.problems[1].to_string(), "entry #1 (field `action.type`): unknown action type `email`; expected `log` or `command`");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadReport {
    /// The valid entries, in document order.
    pub kept: Vec<KeptHook>,
    /// Every problem, document problems first, then in entry order.
    pub problems: Vec<LoadProblem>,
    /// Advice about kept entries (and the empty document), in entry order.
    pub warnings: Vec<LoadProblem>,
}

impl LoadReport {
    /// Parses and validates `yaml`. Never fails and never panics: whatever is wrong is in
    /// `problems`.
    pub fn from_yaml(yaml: &str) -> Self {
        match serde_saphyr::from_str_with_options::<Value>(yaml, yaml_options()) {
            Ok(document) => validate_document(&document),
            Err(error) => LoadReport {
                problems: vec![LoadProblem::document(None, format!("not valid YAML: {}", yaml_error_text(&error)))],
                ..LoadReport::default()
            },
        }
    }

    /// Reads at most [`MAX_DOCUMENT_BYTES`] of UTF-8 from `reader`, then validates it like
    /// [`LoadReport::from_yaml`]. A read error is a document problem.
    pub fn from_reader(reader: impl Read) -> Self {
        let mut bytes = Vec::new();
        let read = reader.take(MAX_DOCUMENT_BYTES + 1).read_to_end(&mut bytes);
        let problem = match read {
            Err(error) => format!("could not be read: {error}"),
            Ok(_) if bytes.len() as u64 > MAX_DOCUMENT_BYTES => {
                format!("larger than {MAX_DOCUMENT_BYTES} bytes")
            }
            Ok(_) => match String::from_utf8(bytes) {
                Ok(text) => return Self::from_yaml(&text),
                Err(error) => format!("not UTF-8: {error}"),
            },
        };
        LoadReport { problems: vec![LoadProblem::document(None, problem)], ..LoadReport::default() }
    }

    /// Indices of the entries that were left out, ascending and without repeats.
    pub fn skipped_entries(&self) -> Vec<usize> {
        let mut entries: Vec<usize> = self.problems.iter().filter_map(LoadProblem::entry).collect();
        entries.dedup();
        entries
    }

    /// Whether the document was refused as a whole, so that nothing was kept: it could not be
    /// read, does not parse, is not a mapping, or has no `hooks` list. An unknown top-level key
    /// is a document problem too, but it leaves the entries to be loaded.
    pub fn has_document_problem(&self) -> bool {
        self.problems.iter().any(|p| p.is_document_problem() && p.field.as_deref().is_none_or(|field| field == "hooks"))
    }

    /// The kept hooks, without their indices.
    pub fn into_hooks(self) -> Vec<HookConfig> {
        self.kept.into_iter().map(|k| k.config).collect()
    }

    /// The kept hooks if there was no problem, else every problem.
    pub fn into_strict(self) -> Result<Vec<HookConfig>, LoadErrors> {
        if self.problems.is_empty() {
            Ok(self.into_hooks())
        } else {
            Err(LoadErrors::new("hooks document", self.problems))
        }
    }
}

/// serde-saphyr's defaults (depth, alias-expansion and other limits, which make hostile input
/// such as alias bombs cheap to reject), with room for large generated files.
fn yaml_options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_nodes = MAX_DOCUMENT_NODES;
    // A node is one event (a scalar) or two (start and end of a list or mapping).
    budget.max_events = 2 * MAX_DOCUMENT_NODES + 16;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_ALIAS_REPLAYED_EVENTS;
    options
}

/// The parser's message and location, without a source snippet (whose header would name the
/// input `<input>`; callers name the file) and in our words where the parser's would send the
/// reader to its own API.
fn yaml_error_text(error: &serde_saphyr::Error) -> String {
    let mut options = serde_saphyr::RenderOptions::new(&YamlMessages);
    options.snippets = serde_saphyr::SnippetMode::Off;
    error.render_with_options(options)
}

struct YamlMessages;

impl serde_saphyr::MessageFormatter for YamlMessages {
    fn format_message<'a>(&self, error: &'a serde_saphyr::Error) -> std::borrow::Cow<'a, str> {
        use serde_saphyr::Error;
        use serde_saphyr::budget::BudgetBreach;
        match error {
            Error::DuplicateMappingKey { key: Some(key), .. } => {
                format!("the key `{key}` appears twice in one mapping; keep one of them").into()
            }
            Error::DuplicateMappingKey { key: None, .. } => {
                "a key appears twice in one mapping; keep one of them".into()
            }
            Error::Budget { breach: BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. }, .. } => format!(
                "the document has more than {MAX_DOCUMENT_NODES} YAML values, lists and mappings (about {} hooks); \
                 split it into several files",
                MAX_DOCUMENT_NODES / 11
            )
            .into(),
            Error::Budget { breach: BudgetBreach::Depth { .. }, .. } => "the document is nested too deeply".into(),
            Error::BinaryNotUtf8 { .. } => "a `!!binary` value is not UTF-8 text; hook fields are text".into(),
            _ => serde_saphyr::DefaultMessageFormatter.format_message(error),
        }
    }
}

fn validate_document(document: &Value) -> LoadReport {
    let mut report = LoadReport::default();
    let root = match document {
        // An empty file declares no hooks, which the loaders accept; but it is more likely the
        // wrong file than a way to say "no hooks", which `hooks: []` says.
        Value::Null => {
            report.warnings.push(LoadProblem::document(
                None,
                "empty; it declares no hooks (write `hooks: []` to say so on purpose)",
            ));
            return report;
        }
        Value::Object(root) => root,
        other => {
            report.problems.push(LoadProblem::document(
                None,
                format!("expected a mapping with a `hooks` list, found {}", describe(other)),
            ));
            return report;
        }
    };
    for key in root.keys().filter(|k| *k != "hooks") {
        report.problems.push(LoadProblem::document(Some(key), "unknown top-level key; the only one is `hooks`"));
    }
    let entries = match root.get("hooks") {
        None => {
            report.problems.push(LoadProblem::document(Some("hooks"), "missing; expected a top-level `hooks` list"));
            return report;
        }
        Some(Value::Null) => return report,
        Some(Value::Array(entries)) => entries,
        Some(other) => {
            report
                .problems
                .push(LoadProblem::document(Some("hooks"), format!("expected a list, found {}", describe(other))));
            return report;
        }
    };
    for (index, entry) in entries.iter().enumerate() {
        let mut problems = EntryProblems { index, found: Vec::new() };
        if let Some(config) = validate_entry(entry, &mut problems)
            && problems.found.is_empty()
        {
            let matcher_given = matches!(entry, Value::Object(fields) if fields.contains_key("matcher"));
            report.warnings.extend(advice(index, &config, matcher_given));
            report.kept.push(KeptHook { index, config });
        }
        report.problems.append(&mut problems.found);
    }
    report
}

/// Warnings for a valid entry. `matcher_given` tells an explicit empty `matcher:` (which reads
/// as `None`) from no matcher at all.
fn advice(index: usize, config: &HookConfig, matcher_given: bool) -> Vec<LoadProblem> {
    let mut warnings = Vec::new();
    let event = config.event;
    if !event.uses_matcher() && matcher_given {
        let why = if event == HookEvent::OnError { "; an `onError` hook runs for every failing tool" } else { "" };
        warnings.push(LoadProblem::at_entry(
            index,
            Some("matcher"),
            format!("ignored for `{event}` events (only `preToolUse` and `postToolUse` use it){why}; remove it"),
        ));
    } else if matcher_given && config.matcher.is_none() {
        warnings.push(LoadProblem::at_entry(
            index,
            Some("matcher"),
            "empty, so it matches every tool, as no `matcher` does; write \"*\" or remove it",
        ));
    } else if config.matcher.as_ref().is_some_and(|m| m.pattern().is_empty()) {
        warnings.push(LoadProblem::at_entry(
            index,
            Some("matcher"),
            "the empty string matches no tool name, so this hook never runs; remove `matcher` to match every tool",
        ));
    }
    if let Some(warning) = unknown_placeholders(index, config) {
        warnings.push(warning);
    }
    if let HookAction::Command { command, mode } = &config.action {
        let message = match mode {
            CommandMode::Shell => untrusted(command, |_| true).map(|names| {
                format!(
                    "shell mode splices {names} into the shell text, where a tool name the model chose or an \
                     error text can run commands; add `mode: safe` to pass values as environment variables"
                )
            }),
            CommandMode::Safe => untrusted(command, |offset| in_bash_arithmetic(&command[..offset])).map(|names| {
                format!(
                    "uses {names} inside `(( ))` or `[[ ]]`, where bash (`sh` on some systems) evaluates a value \
                     such as `a[$(cmd)]` and runs `cmd`; compare it as a string instead"
                )
            }),
        };
        if let Some(message) = message {
            warnings.push(LoadProblem::at_entry(index, Some("action.command"), message));
        }
    }
    warnings
}

/// A warning for the `${name}` placeholders that the event's context never has, which stay as
/// written (Y10): a typo, or a value of another event. In a command, names that are not
/// lower camelCase (`${HOOK_TOOL}`, `${TMPDIR:-/tmp}`) are the shell's own variables and left to it.
fn unknown_placeholders(index: usize, config: &HookConfig) -> Option<LoadProblem> {
    let known = config.event.context_names()?;
    let (template, field, shell) = match &config.action {
        HookAction::Log { message } => (message.as_str(), "action.message", false),
        HookAction::Command { command, .. } => (command.as_str(), "action.command", true),
    };
    let mut unknown: Vec<&str> = Vec::new();
    for (_, name) in placeholders(template) {
        let context_like =
            name.starts_with(|c: char| c.is_ascii_lowercase()) && name.chars().all(|c| c.is_ascii_alphanumeric());
        if !known.contains(&name) && (context_like || !shell) && !unknown.contains(&name) {
            unknown.push(name);
        }
    }
    if unknown.is_empty() {
        return None;
    }
    let names = |names: &[&str]| names.iter().map(|n| format!("`${{{n}}}`")).collect::<Vec<_>>().join(", ");
    let (these, stays) = if unknown.len() == 1 { ("it is", "stays") } else { ("they are", "stay") };
    Some(LoadProblem::at_entry(
        index,
        Some(field),
        format!(
            "{} {stays} as written: {these} not a context value of `{}` hooks, which are {}; check the spelling",
            names(&unknown),
            config.event,
            names(known),
        ),
    ))
}

/// The untrusted placeholders of `command` at offsets that `at` accepts, each named once in
/// order of appearance (`${tool}`, `${error}`), or `None`.
fn untrusted(command: &str, at: impl Fn(usize) -> bool) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for (offset, name) in placeholders(command) {
        if UNTRUSTED_PLACEHOLDERS.contains(&name) && at(offset) && !names.contains(&name) {
            names.push(name);
        }
    }
    (!names.is_empty()).then(|| names.iter().map(|n| format!("`${{{n}}}`")).collect::<Vec<_>>().join(", "))
}

/// Whether text after `before` is inside an arithmetic `(( ))` / `$(( ))` or a `[[ ]]` test,
/// by counting brackets: a heuristic for a warning, not a shell parser.
fn in_bash_arithmetic(before: &str) -> bool {
    before.matches("((").count() > before.matches("))").count()
        || before.matches("[[").count() > before.matches("]]").count()
}

/// The problems of one entry, collected rather than returned so that each entry reports all
/// of its faults at once.
struct EntryProblems {
    index: usize,
    found: Vec<LoadProblem>,
}

impl EntryProblems {
    fn push(&mut self, field: Option<&str>, message: impl Into<String>) {
        self.found.push(LoadProblem::at_entry(self.index, field, message));
    }
}

fn validate_entry(entry: &Value, problems: &mut EntryProblems) -> Option<HookConfig> {
    let Value::Object(fields) = entry else {
        problems.push(None, format!("expected a mapping with {ENTRY_FIELDS}, found {}", describe(entry)));
        return None;
    };
    for key in fields.keys() {
        if !matches!(key.as_str(), "event" | "matcher" | "action") {
            problems.push(Some(key), format!("unknown field; expected {ENTRY_FIELDS}"));
        }
    }
    let event = required_string(fields, "event", "event", problems).and_then(|name| {
        name.parse::<HookEvent>().map_err(|error| problems.push(Some("event"), error.to_string())).ok()
    });
    let matcher = match fields.get("matcher") {
        None | Some(Value::Null) => Some(None),
        Some(Value::String(glob)) => Some(Some(HookMatcher::new(glob.as_str()))),
        Some(other) => {
            problems.push(Some("matcher"), format!("expected a glob string, found {}; quote it", describe(other)));
            None
        }
    };
    let action = match fields.get("action") {
        None | Some(Value::Null) => {
            problems.push(Some("action"), "missing; every hook needs one `action`");
            None
        }
        Some(Value::Object(action)) => validate_action(action, problems),
        Some(other) => {
            problems.push(Some("action"), format!("expected a mapping with `type`, found {}", describe(other)));
            None
        }
    };
    Some(HookConfig::new(event?, matcher?, action?))
}

fn validate_action(action: &Map<String, Value>, problems: &mut EntryProblems) -> Option<HookAction> {
    let kind = required_string(action, "type", "action.type", problems)?;
    // `Some(own field)` for a known type; the allowed keys follow from it.
    let (allowed, template_field): (&[&str], &str) = match kind.to_ascii_lowercase().as_str() {
        "log" => (&["type", "message"], "message"),
        "command" => (&["type", "command", "mode"], "command"),
        _ => {
            problems.push(Some("action.type"), format!("unknown action type `{kind}`; expected `log` or `command`"));
            return None;
        }
    };
    let mut ok = true;
    for key in action.keys() {
        if !allowed.contains(&key.as_str()) {
            let expected = allowed[1..].iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(" or ");
            problems.push(
                Some(&format!("action.{key}")),
                format!("unknown field for a `{}` action; expected {expected}", kind.to_ascii_lowercase()),
            );
            ok = false;
        }
    }
    let template = required_string(action, template_field, &format!("action.{template_field}"), problems);
    if template_field == "message" {
        return template.filter(|_| ok).map(HookAction::log);
    }
    let mode = match action.get("mode") {
        None | Some(Value::Null) => Some(CommandMode::Shell),
        Some(Value::String(mode)) => match mode.to_ascii_lowercase().as_str() {
            "shell" => Some(CommandMode::Shell),
            "safe" => Some(CommandMode::Safe),
            _ => {
                problems
                    .push(Some("action.mode"), format!("unknown command mode `{mode}`; expected `shell` or `safe`"));
                None
            }
        },
        Some(other) => {
            problems.push(Some("action.mode"), format!("expected `shell` or `safe`, found {}", describe(other)));
            None
        }
    };
    let (command, mode) = (template?, mode?);
    ok.then_some(HookAction::Command { command, mode })
}

/// The string at `key`, or a problem naming `field` when it is missing or not a string.
fn required_string(
    fields: &Map<String, Value>,
    key: &str,
    field: &str,
    problems: &mut EntryProblems,
) -> Option<String> {
    match fields.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        None | Some(Value::Null) => {
            problems.push(Some(field), "missing");
            None
        }
        Some(other) => {
            problems.push(Some(field), format!("expected a string, found {}; quote it", describe(other)));
            None
        }
    }
}

fn describe(value: &Value) -> String {
    problems::describe(value, DocumentFormat::Yaml)
}
