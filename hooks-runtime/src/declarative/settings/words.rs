//! The words of a simple command, as command rules see them (CONFORMANCE B2, B5): a value known
//! before the command runs, or one that is not.

/// One word of a simple command after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Word {
    /// Its value, the same whatever the environment.
    Known(String),
    /// A word whose value is only known when the command runs; what it depends on.
    Unknown(String),
}

/// `text` for a reason: at most 60 characters, control characters escaped.
pub(crate) fn shown(text: &str) -> String {
    let cut: String = text.chars().take(60).collect();
    let escaped: String = cut.escape_debug().collect();
    if text.chars().count() > 60 { format!("{escaped}...") } else { escaped }
}
