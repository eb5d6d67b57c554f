//! Tool-name globs.

use std::borrow::Cow;
use std::fmt;

/// A case-insensitive glob over tool names: `*` matches any run of characters (also none),
/// every other character matches itself. There is no `?`, no character class and no escape,
/// so a tool name containing `[` or `?` needs no quoting.
///
/// A matcher only filters [`PreToolUse`](super::HookEvent::PreToolUse) and
/// [`PostToolUse`](super::HookEvent::PostToolUse) hooks; see [`HookConfig`](super::HookConfig).
///
/// ```
/// use hooks_runtime::declarative::HookMatcher;
///
/// let files = HookMatcher::new("file_*");
/// assert!(files.matches("file_read"));
/// assert!(files.matches("FILE_WRITE"));
/// assert!(!files.matches("read_file"));
/// assert!(HookMatcher::ALL.matches("anything"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HookMatcher {
    // `Cow` so that `ALL` can be a `const`.
    pattern: Cow<'static, str>,
}

impl HookMatcher {
    /// The glob `*`, which matches every tool name.
    pub const ALL: HookMatcher = HookMatcher { pattern: Cow::Borrowed("*") };

    /// A matcher for `pattern`.
    pub fn new(pattern: impl Into<String>) -> Self {
        HookMatcher { pattern: Cow::Owned(pattern.into()) }
    }

    /// The glob as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `tool` matches the glob, ignoring case.
    pub fn matches(&self, tool: &str) -> bool {
        // Lower-casing whole strings (not char by char) keeps multi-char lowercase forms aligned
        // on both sides.
        let pattern: Vec<char> = self.pattern.to_lowercase().chars().collect();
        let name: Vec<char> = tool.to_lowercase().chars().collect();
        glob_matches(&pattern, &name)
    }
}

impl fmt::Display for HookMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}

/// Iterative glob match with backtracking to the last `*` only: linear in practice and never
/// recursive, so a hostile pattern like `*a*a*a*a*b` cannot blow the stack.
fn glob_matches(pattern: &[char], name: &[char]) -> bool {
    let (mut p, mut n) = (0, 0);
    // Position of the last `*` seen, and the name position it currently absorbs up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, n));
            p += 1;
        } else if p < pattern.len() && pattern[p] == name[n] {
            p += 1;
            n += 1;
        } else if let Some((star_p, star_n)) = star {
            // Let the last `*` swallow one more character and retry after it.
            p = star_p + 1;
            n = star_n + 1;
            star = Some((star_p, star_n + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::HookMatcher;

    #[test]
    fn globs() {
        let cases = [
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("file_*", "file_", true),
            ("*_file", "read_file", true),
            ("*_file", "read_files", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXcYb", false),
            ("a**b", "ab", true),
            ("f?le", "file", false),
            ("f?le", "F?LE", true),
            ("[x]", "[X]", true),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(HookMatcher::new(pattern).matches(name), expected, "{pattern} vs {name}");
        }
    }
}
