//! The names of MCP tools: `mcp__<server>__<tool>`, and what a server's name may be.

/// The prefix of every MCP tool's name: `mcp__<server>__<tool>`.
pub const MCP_TOOL_PREFIX: &str = "mcp__";

/// The runtime name of the tool `tool` of the server `server`.
pub(super) fn tool_name(server: &str, tool: &str) -> String {
    format!("{MCP_TOOL_PREFIX}{server}__{tool}")
}

/// The longest tool name the providers take (OpenAI's and Anthropic's `^[a-zA-Z0-9_-]{1,64}$`).
const MAX_TOOL_NAME: usize = 64;

/// Why a provider would reject `name`, a whole `mcp__<server>__<tool>` (H4): `None` when it is
/// 1 to 64 ASCII letters, digits, `_` and `-`.
pub(super) fn provider_rejects(name: &str) -> Option<&'static str> {
    if name.len() > MAX_TOOL_NAME {
        return Some("it is longer than 64 bytes");
    }
    if !name.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_') {
        return Some("it holds a character other than ASCII letters, digits, `_` and `-`");
    }
    None
}

/// `(server, tool)` of a name `mcp__<server>__<tool>`; a server's name has no `__`, so the
/// first `__` after the prefix ends it. The tool `*` is the server's wildcard.
pub(crate) fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix(MCP_TOOL_PREFIX)?.split_once("__")
}

/// Why `name` cannot name an MCP server: it must be non-empty ASCII letters, digits, `-` and
/// `_`, without `__` (which ends the server's part of a tool name) or a `_` at either end.
pub(crate) fn check_server_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("it is empty");
    }
    if !name.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_') {
        return Err("it may hold ASCII letters, digits, `-` and `_` only");
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Err(
            "`__` separates it from the tool's name in `mcp__<server>__<tool>`, so it may not hold `__` or begin or end with `_`",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn p1_tool_names_split_at_the_first_double_underscore_after_the_prefix() {
        assert_eq!(split_tool_name("mcp__github__get_issue"), Some(("github", "get_issue")));
        assert_eq!(split_tool_name("mcp__fs__read__all"), Some(("fs", "read__all")));
        assert_eq!(split_tool_name("mcp__fs__*"), Some(("fs", "*")));
        assert_eq!(split_tool_name("get_issue"), None);
        assert_eq!(tool_name("my-server", "echo"), "mcp__my-server__echo");
    }

    #[test]
    fn h4_names_a_provider_rejects_are_found() {
        assert_eq!(provider_rejects(&tool_name("s", "get_issue-2")), None);
        assert_eq!(provider_rejects(&tool_name("s", &"a".repeat(56))), None, "64 bytes in all");
        assert!(provider_rejects(&tool_name("s", &"a".repeat(57))).is_some());
        for tool in ["", "two words", "<b>x</b>", "tab\t", "é", "a.b", "a/b"] {
            let name = tool_name("s", tool);
            if tool.is_empty() {
                assert_eq!(name, "mcp__s__", "an empty tool name leaves the prefix alone");
                continue;
            }
            assert!(provider_rejects(&name).is_some(), "{name:?}");
        }
    }

    #[test]
    fn p1_a_server_name_has_no_double_underscore() {
        assert!(check_server_name("github").is_ok());
        assert!(check_server_name("my_server-2").is_ok());
        assert!(check_server_name("my__server").is_err());
        assert!(check_server_name("_x").is_err());
        assert!(check_server_name("").is_err());
        assert!(check_server_name("a.b").is_err());
    }
}
