//! Loading the `hooks` object of Claude Code-format settings files (CONFORMANCE K1, K2), and
//! `hooks check` on such files.

#![cfg(feature = "declarative")]

use crate::declarative_support;

use std::process::{Command, Output};
use std::time::Duration;

use declarative_support::ScratchDir;
use hooks_runtime::declarative::{SettingsEvent, SettingsHooks, SettingsReport};

/// A settings file as one is found in a project: other keys around `hooks`.
const PROJECT_SETTINGS: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
  "env": {"FOO": "bar"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh", "timeout": 30}]},
      {"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": "./protect-secrets.py", "onFailure": "block", "statusMessage": "Checking"},
        {"type": "command", "command": "./branch-guard.sh"}
      ]}
    ],
    "PostToolUse": [{"matcher": "Edit|MultiEdit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
    "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "./log-failure.sh"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./inject-date.sh"}]}],
    "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "git status --short"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "./check-tests.sh", "timeout": 120}]}],
    "SubagentStop": [{"hooks": [{"type": "command", "command": "./check-subagent.sh"}]}]
  }
}"#;

#[test]
fn k1_a_whole_settings_file_loads_unchanged() {
    let registry = SettingsHooks::from_json_strict(PROJECT_SETTINGS).expect("no problem");
    let hooks = registry.hooks();
    let seen: Vec<(SettingsEvent, &str, &str)> = hooks.iter().map(|h| (h.event(), h.location(), h.command())).collect();
    assert_eq!(seen.len(), 9, "{seen:#?}");
    let guard = hooks.iter().find(|h| h.command().ends_with("guard.sh")).unwrap();
    assert_eq!(guard.location(), "hooks.PreToolUse[0].hooks[0]");
    assert_eq!(guard.timeout(), Duration::from_secs(30));
    assert!(!guard.fails_closed());
    let secrets = hooks.iter().find(|h| h.command() == "./protect-secrets.py").unwrap();
    assert!(secrets.fails_closed() && secrets.matcher().matches("Write") && !secrets.matcher().matches("Bash"));
    let stop = hooks.iter().find(|h| h.event() == SettingsEvent::Stop).unwrap();
    assert_eq!(stop.timeout(), Duration::from_secs(120));
    let branch = hooks.iter().find(|h| h.command() == "./branch-guard.sh").unwrap();
    assert_eq!(branch.timeout(), Duration::from_secs(60), "the default timeout");
}

#[test]
fn k1_a_bare_hooks_object_loads_as_the_whole_file_does() {
    let bare =
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./g.sh"}]}]}}"#;
    let registry = SettingsHooks::from_json_strict(bare).unwrap();
    assert_eq!(registry.hooks().len(), 1);
    assert_eq!(registry.hooks()[0].command(), "./g.sh");
}

#[test]
fn k1_unknown_fields_are_ignored_and_entries_that_cannot_run_are_kept_to_fail_closed() {
    let text = r#"{"hooks": {
      "PreToolUse": [
        {"matcher": "Bash", "hooks": [
          {"type": "command", "command": "./kept.sh"},
          {"type": "prompt", "prompt": "Is it safe?"},
          {"type": "webhook", "command": "x"},
          {"type": "command", "command": "./typo.sh", "tiemout": 5},
          {"type": "command", "command": "./t.sh", "timeout": -1},
          {"type": "command"}
        ]},
        {"matcher": "Write", "hooks": [{"type": "command", "command": "./w.sh"}], "comment": "x"},
        {"matcher": "Bash(", "hooks": [{"type": "command", "command": "./bad-regex.sh"}]}
      ],
      "preToolUse": [{"hooks": [{"type": "command", "command": "./case.sh"}]}],
      "ConfigChange": [{"hooks": [{"type": "command", "command": "notify-send"}]}],
      "PreCompact": [{"hooks": [{"type": "command", "command": "./save.sh"}]}],
      "Setup": [{"hooks": [{"type": "command", "command": "./bye.sh"}]}]
    }}"#;
    let report = SettingsReport::from_json(text);
    // Every entry of a known event is kept: unknown fields ignored, the others with why they
    // cannot run (a guard among them denies rather than vanish).
    let kept: Vec<(&str, &str, bool)> =
        report.kept.iter().map(|h| (h.location(), h.command(), h.cannot_run().is_some())).collect();
    assert_eq!(
        kept,
        [
            ("hooks.PreToolUse[0].hooks[0]", "./kept.sh", false),
            ("hooks.PreToolUse[0].hooks[1]", "", true),
            ("hooks.PreToolUse[0].hooks[2]", "", true),
            ("hooks.PreToolUse[0].hooks[3]", "./typo.sh", false),
            ("hooks.PreToolUse[0].hooks[4]", "./t.sh", true),
            ("hooks.PreToolUse[0].hooks[5]", "", true),
            ("hooks.PreToolUse[1].hooks[0]", "./w.sh", false),
            ("hooks.PreToolUse[2].hooks[0]", "./bad-regex.sh", true),
        ]
    );
    let bad_regex = &report.kept[7];
    assert!(bad_regex.matcher().matches("Anything"), "an unreadable matcher guards every tool");
    assert!(bad_regex.cannot_run().unwrap().starts_with("its group's `matcher` is not a valid regular expression"));
    let problems: Vec<String> = report.problems.iter().map(ToString::to_string).collect();
    let expected = [
        "hooks.ConfigChange: the event `ConfigChange` has no counterpart in this runtime, so its hooks never run; remove them",
        "hooks.PreCompact: the event `PreCompact` has no counterpart in this runtime, so its hooks never run; remove them",
        "hooks.PreToolUse[0].hooks[1] (field `type`): hook type `prompt` is not supported here; only `command` and `http` hooks run",
        "hooks.PreToolUse[0].hooks[2] (field `type`): unknown hook type `webhook`; expected `command`",
        "hooks.PreToolUse[0].hooks[3] (field `tiemout`): unknown field, ignored; expected `type`, `command`, `if`, `timeout`, `onFailure`, `async`, `once` or `statusMessage`",
        "hooks.PreToolUse[0].hooks[4] (field `timeout`): expected a positive number of seconds, found `-1`",
        "hooks.PreToolUse[0].hooks[5] (field `command`): missing",
        "hooks.PreToolUse[1] (field `comment`): unknown field, ignored; expected `matcher` or `hooks`",
    ];
    assert_eq!(problems.iter().filter(|p| p.starts_with("hooks.PreToolUse[0].hooks[1] ")).count(), 1, "only its type");
    for line in expected {
        assert!(problems.iter().any(|p| p == line), "missing {line:?} in {problems:#?}");
    }
    assert!(
        problems.iter().any(|p| p.starts_with("hooks.PreToolUse[2] (field `matcher`): not a valid regular expression")),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|p| p
            .starts_with("hooks.preToolUse: unknown event `preToolUse`; expected one of `PreToolUse`, `PostToolUse`")),
        "{problems:#?}"
    );
    assert!(problems.iter().any(|p| p.starts_with("hooks.Setup: the event `Setup` has no counterpart")));
    assert!(!report.has_document_problem());

    // Lenient: the same hooks, problems logged. Strict: every problem at once.
    assert_eq!(SettingsHooks::from_json(text).hooks(), report.kept.as_slice());
    let errors = SettingsHooks::from_json_strict(text).unwrap_err();
    assert_eq!(errors.problems(), report.problems.as_slice());
    assert!(errors.to_string().starts_with(&format!("{} problems in settings hooks\n", problems.len())));
}

#[test]
fn k1_a_document_that_is_not_a_settings_file_loads_nothing_and_says_why() {
    for (text, message) in [
        ("{not json", "document: not valid JSON: "),
        ("[1]", "document: expected an object with a `hooks` object, found a list"),
        (r#"{"permissions": {}}"#, "document: no `hooks` object"),
        (r#"{"hooks": []}"#, "document: `hooks` must be an object of events, found a list"),
        (
            r#"{"hooks": {"PreToolUse": [], "Stop": [],
                "PreToolUse": [{"hooks": [{"type": "command", "command": "./g.sh"}]}]}}"#,
            "document: not valid JSON: the key `PreToolUse` appears twice in one object (the second would silently replace the first); merge them at line 2",
        ),
    ] {
        let report = SettingsReport::from_json(text);
        assert!(report.has_document_problem() && report.kept.is_empty(), "{text}");
        assert!(report.problems[0].to_string().starts_with(message), "{text}: {}", report.problems[0]);
        assert!(SettingsHooks::from_json(text).is_empty());
        assert!(SettingsHooks::from_json_strict(text).is_err());
    }
    assert!(SettingsHooks::from_json_strict(r#"{"hooks": {}}"#).unwrap().is_empty());
}

#[test]
fn k2_matchers_are_compiled_at_load_and_select_tools() {
    let text = r#"{"hooks": {"PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "bash"}]},
      {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "edits"}]},
      {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "mcp"}]},
      {"matcher": "", "hooks": [{"type": "command", "command": "empty"}]},
      {"matcher": "*", "hooks": [{"type": "command", "command": "star"}]}
    ]}}"#;
    let registry = SettingsHooks::from_json_strict(text).unwrap();
    let for_tool = |tool: &str| -> Vec<&str> {
        registry.hooks().iter().filter(|h| h.matcher().matches(tool)).map(|h| h.command()).collect()
    };
    assert_eq!(for_tool("Bash"), ["bash", "empty", "star"]);
    assert_eq!(for_tool("Edit"), ["edits", "empty", "star"]);
    assert_eq!(for_tool("MultiEdit"), ["empty", "star"]);
    assert_eq!(for_tool("mcp__github__create_issue"), ["mcp", "empty", "star"]);
}

// ---- hooks check --------------------------------------------------------------------------

fn hooks(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hooks")).args(args).output().expect("run the hooks binary")
}

#[test]
fn k1_check_reads_a_settings_file_in_both_modes() {
    let dir = ScratchDir::new("settings-check");
    let good = dir.file("settings.json");
    std::fs::write(&good, PROJECT_SETTINGS).unwrap();
    for args in [vec!["check", good.as_str()], vec!["check", good.as_str(), "--strict"]] {
        let output = hooks(&args);
        let out = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(
            out.contains(&format!(
                "{good}: kept hooks.PreToolUse[1].hooks[0] PreToolUse matcher=Edit|Write command \"./protect-secrets.py\" timeout=60s fails closed\n"
            )),
            "{out}"
        );
        assert!(out.contains(&format!("{good}: settings hooks, 9 hooks kept, 0 problems\n")), "{out}");
    }

    // Any JSON with a `hooks` object is this format, whatever its name.
    let mixed = dir.file("hooks.conf");
    std::fs::write(&mixed, r#"{"hooks": {"ConfigChange": [{"hooks": [{"type": "command", "command": "x"}]}], "Stop": [{"hooks": [{"type": "command", "command": "y"}]}]}}"#).unwrap();
    let lenient = hooks(&["check", &mixed]);
    assert_eq!(lenient.status.code(), Some(0));
    let err = String::from_utf8_lossy(&lenient.stderr);
    assert!(
        err.contains(&format!("warning: {mixed}: hooks.ConfigChange: the event `ConfigChange` has no counterpart")),
        "{err}"
    );
    let strict = hooks(&["check", &mixed, "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&strict.stderr).contains(&format!("error: {mixed}: 1 problem (strict mode)")));

    // A `.json` file that does not parse is a rejected settings file, in both modes.
    let broken = dir.file("broken.json");
    std::fs::write(&broken, r#"{"hooks": {"#).unwrap();
    for args in [vec!["check", broken.as_str()], vec!["check", broken.as_str(), "--strict"]] {
        let output = hooks(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains(&format!("warning: {broken}: document: not valid JSON")), "{err}");
    }
}

#[test]
fn k1_check_lists_the_permission_rules_and_what_a_hook_that_cannot_run_does() {
    let dir = ScratchDir::new("settings-check-rules");
    let file = dir.file("settings.json");
    std::fs::write(
        &file,
        r#"{"permissions": {"allow": ["Bash(npm run lint)"], "ask": ["Bash(git push:*)"], "deny": ["Read(./.env)"]},
            "hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": "$NO_SUCH_VARIABLE_HERE/fmt.sh"}]}]}}"#,
    )
    .unwrap();
    let output = hooks(&["check", &file]);
    let out = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    for line in [
        "rule settings:permissions.allow[0] Bash(npm run lint): runs without the tool's own approval",
        "rule settings:permissions.ask[0] Bash(git push:*): waits for a person's approval",
        "rule settings:permissions.deny[0] Read(./.env): never runs",
    ] {
        assert!(out.contains(&format!("{file}: {line}\n")), "{line}\n{out}");
    }
    // Kept, and not run: the line says what happens to its events, not that it is skipped.
    let kept = out.lines().find(|line| line.contains("kept hooks.PostToolUse[0].hooks[0]")).expect(&out);
    assert!(kept.ends_with("so its events go on without it"), "{kept}");
    assert!(!kept.contains("skipped"), "{kept}");
}

#[test]
fn k1_check_escapes_control_characters_and_cuts_long_names() {
    let dir = ScratchDir::new("settings-check-escape");
    let file = dir.file("hostile.json");
    let long = "N".repeat(1 << 20);
    let text = serde_json::json!({"hooks": {
        "\u{1b}]0;pwned\u{7}\u{1b}[2J": [],
        long.clone(): [],
        "PreToolUse": [{"hooks": [{"type": "command", "command": "true", "\u{1b}[31mred": 1}]}]
    }})
    .to_string();
    std::fs::write(&file, text).unwrap();
    let output = hooks(&["check", &file]);
    let (out, err) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(!out.contains('\u{1b}') && !err.contains('\u{1b}') && !err.contains('\u{7}'), "{err}");
    assert!(err.contains("\\u{1b}]0;pwned\\u{7}"), "{err}");
    assert!(output.stderr.len() < 20_000, "a 1 MB name printed whole: {} bytes", output.stderr.len());
}

#[test]
fn k2_check_with_tools_warns_on_a_matcher_that_names_none_of_them() {
    let dir = ScratchDir::new("settings-check-tools");
    let file = dir.file("settings.json");
    std::fs::write(
        &file,
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Refund", "hooks": [{"type": "command", "command": "./guard.sh"}]},
            {"matcher": "lookup|refund", "hooks": [{"type": "command", "command": "./ok.sh"}]}
        ]}}"#,
    )
    .unwrap();
    let plain = hooks(&["check", &file, "--strict"]);
    assert_eq!(plain.status.code(), Some(0), "without --tools there is nothing to compare with");
    let output = hooks(&["check", &file, "--strict", "--tools", "refund,lookup"]);
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("hooks.PreToolUse[0] (field `matcher`): `Refund` names none of the tools (`refund`, `lookup`), so its hooks never run; matchers are case-sensitive: did you mean `refund`?"),
        "{err}"
    );
    assert!(!err.contains("hooks.PreToolUse[1]"), "{err}");
}
