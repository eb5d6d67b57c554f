//! The problem type both loaders (the YAML hooks document and the settings file) report with,
//! and how they write it: one line each, ``<where> (field `<field>`): <what>``, under a count
//! that names the document.

use std::fmt;

use serde_json::Value;

/// Where in a document a problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemPlace {
    /// The document as a whole, or one of its top-level keys (named by the problem's field).
    Document,
    /// An entry of a YAML hooks document's `hooks` list, by index.
    Entry(usize),
    /// A path into a settings file, such as `hooks.PreToolUse[0].hooks[1]`.
    Path(String),
}

impl fmt::Display for ProblemPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemPlace::Document => f.write_str("document"),
            ProblemPlace::Entry(index) => write!(f, "entry #{index}"),
            ProblemPlace::Path(path) => f.write_str(path),
        }
    }
}

/// One thing wrong with a hooks document or a settings file.
///
/// ```
/// use hooks_runtime::declarative::{LoadProblem, ProblemPlace};
///
/// let problem = LoadProblem::new(ProblemPlace::Entry(1), Some("event"), "unknown event `never`");
/// assert_eq!(problem.to_string(), "entry #1 (field `event`): unknown event `never`");
/// assert_eq!(problem.entry(), Some(1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadProblem {
    /// Where: the document, an entry of a hooks document, or a path into a settings file.
    pub place: ProblemPlace,
    /// The field at fault within `place`, as a dotted path (`action.type`), or a top-level key
    /// for a document problem; `None` when the place as a whole is at fault.
    pub field: Option<String>,
    /// What is wrong, and what was expected.
    pub message: String,
}

impl LoadProblem {
    /// A problem at `place`, in `field` (`None`: the place as a whole), saying `message`.
    pub fn new(place: ProblemPlace, field: Option<&str>, message: impl Into<String>) -> Self {
        LoadProblem { place, field: field.map(str::to_owned), message: message.into() }
    }

    /// The index of the hooks-document entry at fault, if the problem is with one.
    pub fn entry(&self) -> Option<usize> {
        match self.place {
            ProblemPlace::Entry(index) => Some(index),
            _ => None,
        }
    }

    /// Whether the problem is with the document as a whole (or a top-level key of it).
    pub fn is_document_problem(&self) -> bool {
        self.place == ProblemPlace::Document
    }

    pub(super) fn at_entry(index: usize, field: Option<&str>, message: impl Into<String>) -> Self {
        Self::new(ProblemPlace::Entry(index), field, message)
    }

    pub(super) fn at_path(path: &str, field: Option<&str>, message: impl Into<String>) -> Self {
        Self::new(ProblemPlace::Path(path.to_owned()), field, message)
    }

    pub(super) fn document(field: Option<&str>, message: impl Into<String>) -> Self {
        Self::new(ProblemPlace::Document, field, message)
    }
}

impl fmt::Display for LoadProblem {
    /// ``entry #3 (field `action.type`): unknown action type `email`; ...``,
    /// ``hooks.PreToolUse[0].hooks[1] (field `type`): ...``, or `document: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.place)?;
        if let Some(field) = &self.field {
            write!(f, " (field `{field}`)")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every problem a strict loader found: of a hooks document
/// ([`DeclarativeHookRegistry::from_yaml_strict`](super::DeclarativeHookRegistry::from_yaml_strict))
/// or of a settings file ([`SettingsHooks::from_json_strict`](super::SettingsHooks::from_json_strict)).
/// Its `Debug` is its `Display` (each problem names its place, field and what was expected), so
/// a `main` that returns it with `?` prints the list.
///
/// ```
/// use hooks_runtime::declarative::DeclarativeHookRegistry;
///
/// let error = DeclarativeHookRegistry::from_yaml_strict("hooks:\n  - event: never\n    action: {type: log, message: m}\n")
///     .unwrap_err();
/// assert!(format!("{error:?}").starts_with("1 problem in hooks document\n  entry #0 (field `event`): unknown event `never`"));
/// ```
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render_problems(self.document, &self.problems))]
pub struct LoadErrors {
    /// What was loaded, for the first line: `hooks document` or `settings hooks`.
    document: &'static str,
    problems: Vec<LoadProblem>,
}

impl fmt::Debug for LoadErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl LoadErrors {
    pub(super) fn new(document: &'static str, problems: Vec<LoadProblem>) -> Self {
        LoadErrors { document, problems }
    }

    /// The problems, in the order the loader's report lists them.
    pub fn problems(&self) -> &[LoadProblem] {
        &self.problems
    }
}

/// `N problem(s) in <document>`, then each problem on an indented line of its own.
fn render_problems(document: &str, problems: &[LoadProblem]) -> String {
    let n = problems.len();
    let mut text = format!("{n} problem{} in {document}", if n == 1 { "" } else { "s" });
    for problem in problems {
        text.push_str(&format!("\n  {problem}"));
    }
    text
}

/// How a loader names a value it did not expect, in its format's words: `null` and
/// `an object` in JSON are `nothing` and `a mapping` in YAML. A long string is cut at 40
/// characters, so a problem never echoes a whole value.
pub(super) fn describe(value: &Value, format: DocumentFormat) -> String {
    match value {
        Value::Null => format.null().to_owned(),
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::String(s) if s.chars().count() > 40 => {
            format!("the string {:?}...", s.chars().take(40).collect::<String>())
        }
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => format.object().to_owned(),
    }
}

/// The format of the document a loader reads, for the words its problems use.
#[derive(Clone, Copy)]
pub(super) enum DocumentFormat {
    Yaml,
    Json,
}

impl DocumentFormat {
    fn null(self) -> &'static str {
        match self {
            DocumentFormat::Yaml => "nothing",
            DocumentFormat::Json => "null",
        }
    }

    fn object(self) -> &'static str {
        match self {
            DocumentFormat::Yaml => "a mapping",
            DocumentFormat::Json => "an object",
        }
    }
}
