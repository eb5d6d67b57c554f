//! Which environment variables a command names that would expand to nothing: a hook written
//! for a plugin (`node "${CLAUDE_PLUGIN_ROOT}/guard.js"`) run outside one cannot run as written.

/// The variables `command` expands (`$NAME`, `${NAME}`) outside single quotes that are neither
/// set in this process's environment, nor `provided` by the runner, nor given a value in the
/// command itself (`NAME=`, `for NAME`, `read ... NAME`), nor given a default (`${NAME:-x}`).
/// Each is named once, in order.
pub(crate) fn unset_variables(command: &str, provided: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for name in expanded(command) {
        if names.contains(&name) || provided(&name) || std::env::var_os(&name).is_some() || assigned_in(command, &name)
        {
            continue;
        }
        names.push(name);
    }
    names
}

/// The names of the plain expansions of `command`, in order: single-quoted text and escaped
/// dollars are skipped, as `sh` skips them; `${NAME...}` with an operator is not plain.
fn expanded(command: &str) -> Vec<String> {
    let chars: Vec<char> = command.chars().collect();
    let (mut names, mut i, mut single, mut double) = (Vec::new(), 0, false, false);
    let name_at = |mut j: usize| {
        let start = j;
        while j < chars.len() && (chars[j].is_ascii_alphanumeric() || chars[j] == '_') {
            j += 1;
        }
        let name: String = chars[start..j].iter().collect();
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        (valid.then_some(name), j)
    };
    while i < chars.len() {
        match chars[i] {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single => i += 1,
            '$' if !single => {
                if chars.get(i + 1) == Some(&'{') {
                    let (name, end) = name_at(i + 2);
                    if let Some(name) = name
                        && chars.get(end) == Some(&'}')
                    {
                        names.push(name);
                    }
                    i = end;
                    continue;
                }
                let (name, end) = name_at(i + 1);
                if let Some(name) = name {
                    names.push(name);
                }
                i = end.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    names
}

/// Whether `command` gives `name` a value itself.
fn assigned_in(command: &str, name: &str) -> bool {
    let words: Vec<&str> = command.split(|c: char| c.is_whitespace() || ";|&()".contains(c)).collect();
    words.iter().any(|word| word.strip_prefix(name).is_some_and(|rest| rest.starts_with('=')))
        || words.windows(2).any(|pair| matches!(pair[0], "for" | "read" | "local" | "export") && pair[1] == name)
        || words.iter().position(|word| *word == "read").is_some_and(|at| words[at..].contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unset(command: &str) -> Vec<String> {
        unset_variables(command, &|name| name == "CLAUDE_PROJECT_DIR")
    }

    #[test]
    fn k1_unset_variables_are_found_where_sh_expands_them() {
        assert_eq!(unset(r#"node "${CLAUDE_PLUGIN_ROOT}/guard.js""#), ["CLAUDE_PLUGIN_ROOT"]);
        assert_eq!(unset("python3 $CLAUDE_PLUGIN_ROOT/a.py $CLAUDE_PLUGIN_ROOT"), ["CLAUDE_PLUGIN_ROOT"]);
        assert!(unset(r#""$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh"#).is_empty());
        assert!(unset("echo $HOME $PATH").is_empty(), "set in the environment");
        assert!(unset("jq -r '.tool_input | $x' $1 $? $$").is_empty(), "quoted, positional, special");
        assert!(unset(r"echo \$NOPE_X ${NOPE_Y:-default}").is_empty(), "escaped, with a default");
        assert!(unset("F=1; echo $F; for G in a; do echo $G; done; read -r H; echo $H").is_empty());
        assert_eq!(unset(r#"echo "$NOPE_Z""#), ["NOPE_Z"], "double quotes expand");
    }
}
