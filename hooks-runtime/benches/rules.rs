//! The cost of a settings file's permission decision for one `Bash` call: 20 rules (10 deny,
//! 5 ask, 5 allow) against a 200-character command, with the shell-parsing matcher
//! (`SettingsPermissions::decide`, the command parsed once per call) side by side with the
//! previous matcher, a regex over the command split at `&&`, `||`, `;`, `|` and newlines
//! (copied below as the baseline). Compare with a whole tool-call turn in
//! `cargo bench -p hooks-runtime --bench turn -- governed`.
//!
//! Run it with `cargo bench -p hooks-runtime --bench rules`; variants interleaved round by round
//! (10 ms samples, 41 rounds unless `BENCH_SAMPLE_MS` and `BENCH_ROUNDS` say otherwise).

#![allow(missing_docs)]

mod harness;

use std::hint::black_box;

use hooks_runtime::__bench::settings_permission;
use hooks_runtime::declarative::SettingsReport;
use serde_json::{Value, json};

const DENY: [&str; 10] = [
    "Bash(git push:*)",
    "Bash(rm -rf:*)",
    "Bash(curl:*)",
    "Bash(wget:*)",
    "Bash(sudo:*)",
    "Bash(npm publish:*)",
    "Bash(docker push:*)",
    "Bash(ssh:*)",
    "Bash(scp:*)",
    "Bash(git reset --hard:*)",
];
const ASK: [&str; 5] =
    ["Bash(git commit:*)", "Bash(npm install:*)", "Bash(cargo publish:*)", "Bash(rm *)", "Bash(mv *)"];
const ALLOW: [&str; 5] = ["Bash(ls:*)", "Bash(cat:*)", "Bash(grep:*)", "Bash(cargo test:*)", "Bash(git status:*)"];

/// 200 characters: a chain, a pipeline, quotes and a substitution, none of them denied.
const COMMAND: &str = "cd /work/projects && cargo test -p hooks-runtime --lib settings 2>&1 | grep -v '^warning' | head -n 400; git status --short && ls -la target/debug | wc -l && echo \"done at $(date +%H:%M)\" >> build.log";

/// The matcher before command rules read the shell tree: deny > ask > allow, each rule a regex
/// over the whole command or over the parts split at `&&`, `||`, `;`, `|` and newlines.
mod baseline {
    pub(crate) struct Rule(regex::Regex);

    impl Rule {
        pub(crate) fn parse(text: &str) -> Rule {
            let inner = text.strip_prefix("Bash(").and_then(|rest| rest.strip_suffix(')')).unwrap();
            Rule(command_regex(inner).unwrap())
        }

        pub(crate) fn selects(&self, allow: bool, command: &str) -> bool {
            let parts = command_parts(command);
            if allow {
                !parts.is_empty() && parts.iter().all(|part| self.0.is_match(part))
            } else {
                self.0.is_match(command.trim()) || parts.iter().any(|part| self.0.is_match(part))
            }
        }
    }

    pub(crate) fn decide(deny: &[Rule], ask: &[Rule], allow: &[Rule], command: &str) -> Option<&'static str> {
        if deny.iter().any(|rule| rule.selects(false, command)) {
            Some("deny")
        } else if ask.iter().any(|rule| rule.selects(false, command)) {
            Some("ask")
        } else if allow.iter().any(|rule| rule.selects(true, command)) {
            Some("allow")
        } else {
            None
        }
    }

    fn command_regex(pattern: &str) -> Result<regex::Regex, String> {
        match pattern.strip_suffix(":*") {
            Some(prefix) => regex::Regex::new(&format!("^{}(\\s.*)?$", regex::escape(prefix.trim())))
                .map_err(|error| error.to_string()),
            None => glob_regex(pattern),
        }
    }

    fn glob_regex(glob: &str) -> Result<regex::Regex, String> {
        let mut out = String::from("^");
        for c in glob.chars() {
            match c {
                '*' => out.push_str(".*"),
                '?' => out.push('.'),
                c => out.push_str(&regex::escape(&c.to_string())),
            }
        }
        out.push('$');
        regex::RegexBuilder::new(&out).size_limit(1 << 20).build().map_err(|error| error.to_string())
    }

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
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    harness::set_defaults(10, 41);
    assert_eq!(COMMAND.len(), 200, "the command is 200 characters");
    let settings = json!({"permissions": {"deny": DENY, "ask": ASK, "allow": ALLOW}, "hooks": {}});
    let report = SettingsReport::from_json(&settings.to_string());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    let permissions = report.permissions;
    let arguments: Value = json!({"command": COMMAND});
    let old = |list: &[&str]| list.iter().map(|text| baseline::Rule::parse(text)).collect::<Vec<_>>();
    let (deny, ask, allow) = (old(&DENY), old(&ASK), old(&ALLOW));
    // Both answer the same for this command: no rule denies or asks; not every part is allowed.
    assert_eq!(settings_permission(&permissions, "Bash", &arguments), None);
    assert_eq!(baseline::decide(&deny, &ask, &allow, COMMAND), None);

    println!("\nOne Bash call's permission decision: 20 rules, a 200-character command");
    let variants = vec![
        harness::Variant::new("shell tree (brush-parser)", |n| {
            harness::time(n, || {
                black_box(settings_permission(black_box(&permissions), "Bash", black_box(&arguments)));
            })
        }),
        harness::Variant::new("previous splitter + regex", |n| {
            harness::time(n, || {
                black_box(baseline::decide(&deny, &ask, &allow, black_box(COMMAND)));
            })
        }),
    ];
    let group = harness::measure("permission decision, 20 rules", variants);
    let ratio = group.ratio("shell tree (brush-parser)", "previous splitter + regex");
    println!("\n| matcher | us per decision | x previous |");
    println!("|---|---:|---:|");
    println!("| previous splitter + regex | {:.2} | 1.000x |", group.ns("previous splitter + regex") / 1000.0);
    println!("| shell tree (brush-parser) | {:.2} | {ratio:.2}x |", group.ns("shell tree (brush-parser)") / 1000.0);
}
