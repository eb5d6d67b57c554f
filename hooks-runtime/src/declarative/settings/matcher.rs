//! The settings format's matchers: exact names, `|`-separated names, or regular expressions.

use std::fmt;

/// Longest compiled form of a matcher's regular expression, in bytes: a hostile or mistaken
/// pattern is refused at load instead of costing memory on every tool call.
const MAX_REGEX_BYTES: usize = 1 << 20;

/// Which tool names a settings hook runs for, as that format writes it.
///
/// Empty or `*` matches every name. A pattern of letters, digits, `_` and `|` only (`Bash`,
/// `Edit|Write`, `mcp__github__create_issue`) is one name or a list of names, each matched
/// exactly and case-sensitively. Anything else (`mcp__.*`, `Notebook.*`, `^Read$`) is a regular
/// expression, compiled once when the file loads and searched in the name, unanchored, as the
/// format's own runner does.
///
/// ```
/// use hooks_runtime::declarative::SettingsMatcher;
///
/// let edits = SettingsMatcher::new("Edit|Write").unwrap();
/// assert!(edits.matches("Write") && !edits.matches("MultiEdit"));
/// let mcp = SettingsMatcher::new("mcp__.*").unwrap();
/// assert!(mcp.matches("mcp__github__create_issue") && !mcp.matches("Bash"));
/// assert!(SettingsMatcher::new("").unwrap().matches("anything"));
/// assert!(SettingsMatcher::new("(").is_err());
/// ```
#[derive(Clone)]
pub struct SettingsMatcher {
    pattern: String,
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    All,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl SettingsMatcher {
    /// The matcher of `pattern`, or the regular expression's error.
    pub fn new(pattern: impl Into<String>) -> Result<Self, regex::Error> {
        let pattern = pattern.into();
        let kind = if pattern.is_empty() || pattern == "*" {
            Kind::All
        } else if pattern.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|') {
            Kind::Names(pattern.split('|').filter(|name| !name.is_empty()).map(str::to_owned).collect())
        } else {
            Kind::Regex(regex::RegexBuilder::new(&pattern).size_limit(MAX_REGEX_BYTES).build()?)
        };
        Ok(SettingsMatcher { pattern, kind })
    }

    /// The matcher of every name.
    pub fn all() -> Self {
        SettingsMatcher { pattern: String::new(), kind: Kind::All }
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        match &self.kind {
            Kind::All => true,
            Kind::Names(names) => names.iter().any(|n| n == name),
            Kind::Regex(regex) => regex.is_match(name),
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }
}

impl PartialEq for SettingsMatcher {
    fn eq(&self, other: &Self) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for SettingsMatcher {}

impl fmt::Debug for SettingsMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SettingsMatcher({:?})", self.pattern)
    }
}

impl fmt::Display for SettingsMatcher {
    /// The pattern, or `*` for every name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.pattern.is_empty() { "*" } else { &self.pattern })
    }
}
