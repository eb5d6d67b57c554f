//! `${name}` placeholders: plain text substitution, and the safe form for shell commands.
//!
//! One scanner serves both, so that a placeholder is recognised the same way everywhere:
//! `${` then one or more characters other than `{`, `}` and `$`, then `}`. A name that is not in
//! the context stays as written. Substituted values are never scanned again, so a value that
//! itself contains `${other}` stays literal.

use std::collections::BTreeMap;

use super::{CommandMode, HookContext};

/// Replaces every `${name}` in `template` with the context value of that name; an unknown name
/// stays as written. Values are inserted as they are, without quoting.
pub(super) fn substitute(template: &str, context: &HookContext) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        match placeholder_at(after) {
            Some((name, len)) if context.contains_key(name) => {
                out.push_str(&context[name]);
                rest = &after[len..];
            }
            _ => {
                // Not a known placeholder: keep the `$` and rescan from the next character, so
                // `${a ${tool}` still substitutes the inner placeholder.
                out.push('$');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The placeholders in `template` with their byte offsets, in order, with repeats; what
/// [`substitute`] would replace given a value for every name.
pub(super) fn placeholders(template: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    std::iter::from_fn(move || {
        while let Some(start) = template[offset..].find("${") {
            let at = offset + start;
            if let Some((name, len)) = placeholder_at(&template[at..]) {
                offset = at + len;
                return Some((at, name));
            }
            offset = at + 1;
        }
        None
    })
}

/// If `text` starts with a placeholder, its name and the placeholder's length in bytes.
fn placeholder_at(text: &str) -> Option<(&str, usize)> {
    let body = text.strip_prefix("${")?;
    let end = body.find(['}', '{', '$'])?;
    if end == 0 || !body[end..].starts_with('}') {
        return None;
    }
    Some((&body[..end], 2 + end + 1))
}

/// The environment variable that carries the context value `key` to a command:
/// `HOOK_` followed by the key in upper snake case.
///
/// `tool` becomes `HOOK_TOOL`, `latencyMs` becomes `HOOK_LATENCY_MS`, and every character that
/// is not an ASCII letter or digit becomes `_`. When two keys of one context map to the same
/// name, the later key (in key order) gets a `_2`, `_3`, ... suffix ([`unique_env_names`]).
fn env_var_name(key: &str) -> String {
    let mut name = String::from("HOOK_");
    let mut previous_lower = false;
    for c in key.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            name.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_uppercase());
        } else {
            name.push('_');
        }
    }
    name
}

/// Longest context value a command receives, in bytes; a longer value is cut at a character
/// boundary and ends in `… N bytes cut`.
///
/// Linux refuses to start a program when one argument or environment string is longer than
/// 128 KiB, and a command that cannot start is an audit hook that silently does not run (Y15).
pub const MAX_COMMAND_VALUE_BYTES: usize = 32 * 1024;

/// What a NUL in a context value or command becomes: U+FFFD, the replacement character.
/// Arguments and environment strings cannot hold a NUL, so keeping it would stop the command
/// from starting at all (Y15).
pub const NUL_REPLACEMENT: &str = "\u{FFFD}";

/// A context value as a command gets it: NULs replaced, length capped. The marker of a cut
/// value holds no shell metacharacter, so it adds none in shell mode.
fn command_value(value: &str) -> String {
    let mut value = value.replace('\0', NUL_REPLACEMENT);
    if value.len() > MAX_COMMAND_VALUE_BYTES {
        let mut end = MAX_COMMAND_VALUE_BYTES;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        let cut = value.len() - end;
        value.truncate(end);
        value.push_str(&format!("… {cut} bytes cut"));
    }
    value
}

/// A command ready to run: the text for `sh -c` and the variables to set in its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PreparedCommand {
    /// The script passed to `sh -c`.
    pub(super) script: String,
    /// `HOOK_*` variables, one for every context value, in key order.
    pub(super) env: Vec<(String, String)>,
}

/// Turns a command template into the script and environment that run it.
///
/// Values reach the command with every NUL replaced by [`NUL_REPLACEMENT`] and cut to
/// [`MAX_COMMAND_VALUE_BYTES`], so that no value can keep it from starting; a NUL in the
/// template is replaced too. Every context value is exported as [`env_var_name`]. In [`CommandMode::Shell`] the script is
/// [`substitute`]'s output. In [`CommandMode::Safe`] each known `${name}` becomes a reference to
/// its variable, quoted for where it stands: `"${HOOK_TOOL}"` outside quotes, `${HOOK_TOOL}`
/// inside double quotes, `'"${HOOK_TOOL}"'` inside single quotes. The quoting only protects the
/// value from word splitting and globbing; safety does not depend on it, because the value is
/// never part of the script text.
pub(super) fn prepare_command(template: &str, mode: CommandMode, context: &HookContext) -> PreparedCommand {
    let values: HookContext = context.iter().map(|(key, value)| (key.clone(), command_value(value))).collect();
    let names = unique_env_names(&values);
    let script = match mode {
        CommandMode::Shell => substitute(template, &values),
        CommandMode::Safe => safe_script(template, &names),
    };
    let script = if script.contains('\0') { script.replace('\0', NUL_REPLACEMENT) } else { script };
    let env = names.into_iter().map(|(key, var)| (var, values[key].clone())).collect();
    PreparedCommand { script, env }
}

/// Context key to its environment variable, collisions resolved by suffix in key order.
fn unique_env_names(context: &HookContext) -> BTreeMap<&str, String> {
    let mut taken = std::collections::BTreeSet::new();
    let mut names = BTreeMap::new();
    for key in context.keys() {
        let base = env_var_name(key);
        let mut var = base.clone();
        let mut n = 2;
        while !taken.insert(var.clone()) {
            var = format!("{base}_{n}");
            n += 1;
        }
        names.insert(key.as_str(), var);
    }
    names
}

/// Where the scanner stands in the shell text, as far as quoting goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

fn safe_script(template: &str, names: &BTreeMap<&str, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut quote = Quote::None;
    let mut chars = template.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '$'
            && let Some((name, len)) = placeholder_at(&template[i..])
            && let Some(var) = names.get(name)
        {
            match quote {
                Quote::None => out.push_str(&format!("\"${{{var}}}\"")),
                Quote::Double => out.push_str(&format!("${{{var}}}")),
                Quote::Single => out.push_str(&format!("'\"${{{var}}}\"'")),
            }
            // Skip the rest of the placeholder (`len` bytes from `i`).
            while chars.peek().is_some_and(|(j, _)| *j < i + len) {
                chars.next();
            }
            continue;
        }
        out.push(c);
        match (quote, c) {
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            // A backslash outside single quotes escapes the next character, which therefore
            // neither changes the quoting nor starts a placeholder (`\${tool}` stays literal,
            // as the shell would print it).
            (Quote::None | Quote::Double, '\\') => {
                if let Some((_, escaped)) = chars.next() {
                    out.push(escaped);
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(pairs: &[(&str, &str)]) -> HookContext {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn an_unknown_placeholder_stays_as_written() {
        let context = context(&[("tool", "file_read")]);
        assert_eq!(substitute("${tool} took ${latencyMs} ms", &context), "file_read took ${latencyMs} ms");
    }

    #[test]
    fn a_context_key_becomes_an_upper_snake_case_variable() {
        assert_eq!(env_var_name("tool"), "HOOK_TOOL");
        assert_eq!(env_var_name("latencyMs"), "HOOK_LATENCY_MS");
        assert_eq!(env_var_name("my-key.1"), "HOOK_MY_KEY_1");
    }

    #[test]
    fn y15_a_value_reaches_a_safe_command_as_a_variable_never_as_text() {
        let context = context(&[("tool", "x; touch pwned")]);
        let prepared = prepare_command("echo ${tool} '${tool}'", CommandMode::Safe, &context);
        assert_eq!(prepared.script, r#"echo "${HOOK_TOOL}" ''"${HOOK_TOOL}"''"#);
        assert_eq!(prepared.env, vec![("HOOK_TOOL".to_owned(), "x; touch pwned".to_owned())]);
    }

    #[test]
    fn y15_a_nul_in_the_command_itself_is_replaced() {
        let prepared = prepare_command("echo a\0b", CommandMode::Safe, &context(&[]));
        assert_eq!(prepared.script, format!("echo a{NUL_REPLACEMENT}b"));
    }

    #[test]
    fn placeholders() {
        let ctx = context(&[("tool", "t"), ("a", "${tool}")]);
        assert_eq!(substitute("${tool}${tool}", &ctx), "tt");
        assert_eq!(substitute("${a}", &ctx), "${tool}");
        assert_eq!(substitute("${}${", &ctx), "${}${");
        assert_eq!(substitute("${x ${tool}}", &ctx), "${x t}");
        assert_eq!(substitute("é${tool}é", &ctx), "été");
    }

    #[test]
    fn safe_quoting() {
        let ctx = context(&[("tool", "t"), ("latencyMs", "1"), ("latency_ms", "2")]);
        let p = prepare_command(
            r#"a ${tool} "b ${tool}" 'c ${tool}' \${tool} ${latency_ms} ${nope}"#,
            CommandMode::Safe,
            &ctx,
        );
        assert_eq!(
            p.script,
            r#"a "${HOOK_TOOL}" "b ${HOOK_TOOL}" 'c '"${HOOK_TOOL}"'' \${tool} "${HOOK_LATENCY_MS_2}" ${nope}"#
        );
        assert_eq!(
            p.env,
            vec![
                ("HOOK_LATENCY_MS".to_owned(), "1".to_owned()),
                ("HOOK_LATENCY_MS_2".to_owned(), "2".to_owned()),
                ("HOOK_TOOL".to_owned(), "t".to_owned()),
            ]
        );
    }
}
