//! How both loaders (the YAML hooks document and the settings file) write their problems: one
//! line each, ``<where> (field `<field>`): <what>``, under a count that names the document.

use std::fmt;

/// Writes one problem: `place`, the field at fault if there is one, then the message.
pub(super) fn write_problem(
    f: &mut fmt::Formatter<'_>,
    place: impl fmt::Display,
    field: Option<&str>,
    message: &str,
) -> fmt::Result {
    write!(f, "{place}")?;
    if let Some(field) = field {
        write!(f, " (field `{field}`)")?;
    }
    write!(f, ": {message}")
}

/// `N problem(s) in <document>`, then each problem on an indented line of its own.
pub(super) fn render_problems(document: &str, problems: &[impl fmt::Display]) -> String {
    let n = problems.len();
    let mut text = format!("{n} problem{} in {document}", if n == 1 { "" } else { "s" });
    for problem in problems {
        text.push_str(&format!("\n  {problem}"));
    }
    text
}
