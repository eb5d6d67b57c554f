//! The `hooks check FILE... [--strict]` command-line tool, run as a process on files.

#![cfg(feature = "declarative")]

use crate::declarative_support;

use std::process::{Command, Output};

use declarative_support::{ScratchDir, fixture};

fn hooks(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hooks")).args(args).output().expect("run the hooks binary")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn y2_check_lists_kept_hooks_and_exits_zero_in_both_modes_for_a_valid_file() {
    let file = fixture("valid.yaml");
    let file = file.to_str().unwrap();
    for args in [vec!["check", file], vec!["check", file, "--strict"], vec!["check", "--strict", file]] {
        let output = hooks(&args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", stderr(&output));
        let out = stdout(&output);
        assert!(
            out.starts_with(&format!("{file}: kept #0 preToolUse matcher=file_* log \"${{tool}} starting\"\n")),
            "{out}"
        );
        assert!(
            out.contains(&format!("{file}: kept #2 onError matcher=- command \"echo tool failed >> hooks.log\"\n")),
            "{out}"
        );
        assert!(out.contains(&format!("{file}: kept #4 onStop matcher=- command(safe) ")), "{out}");
        assert!(out.contains(&format!("{file}: 5 hooks kept, 0 entries skipped\n")), "{out}");
        assert_eq!(stderr(&output), "");
    }
}

#[test]
fn y2_check_warns_for_each_skipped_entry_and_fails_only_in_strict_mode() {
    let file = fixture("mixed.yaml");
    let file = file.to_str().unwrap();

    let lenient = hooks(&["check", file]);
    assert_eq!(lenient.status.code(), Some(0), "{}", stderr(&lenient));
    let out = stdout(&lenient);
    let kept: Vec<&str> = out.lines().filter(|l| l.contains(": kept #")).collect();
    assert_eq!(
        kept,
        [
            format!("{file}: kept #0 preToolUse matcher=file_* log \"${{tool}} starting\""),
            format!("{file}: kept #5 onStart matcher=- command \"true\""),
        ]
    );
    assert!(out.contains("2 hooks kept, 4 entries skipped"), "{out}");
    let err = stderr(&lenient);
    for expected in [
        "entry #1 (field `event`): unknown event `beforeToolUse`",
        "entry #2 (field `event`): missing",
        "entry #3 (field `action.type`): unknown action type `email`; expected `log` or `command`",
        "entry #4 (field `matcher`): expected a glob string",
        "entry #4 (field `action.command`): missing",
    ] {
        assert!(err.contains(&format!("warning: {file}: {expected}")), "missing {expected:?} in\n{err}");
    }

    let strict = hooks(&["check", file, "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(stdout(&strict), out);
    assert!(stderr(&strict).contains(&format!("error: {file}: 5 problems (strict mode)")), "{}", stderr(&strict));
}

#[test]
fn y2_check_reports_an_unparseable_document_naming_the_file_and_position() {
    let file = fixture("broken.yaml");
    let file = file.to_str().unwrap();
    let lenient = hooks(&["check", file]);
    let err = stderr(&lenient);
    assert!(
        err.contains(&format!("warning: {file}: document: not valid YAML: unclosed quote at line 3, column 34")),
        "{err}"
    );
    assert!(!err.contains("<input>"), "{err}");
    assert!(stdout(&lenient).contains("0 hooks kept, 0 entries skipped, document rejected"));
    // Rejected whole, nothing would load: an error in both modes.
    assert_eq!(lenient.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("error: {file}: document rejected, no hooks would be loaded")), "{err}");
    assert_eq!(hooks(&["check", file, "--strict"]).status.code(), Some(1));
}

#[test]
fn y2_check_exits_non_zero_in_both_modes_for_every_document_rejected_whole() {
    let cases: [&[u8]; 5] = [b"- just a list\n", b"other: 1\n", b"hooks: 3\n", b"hooks: [\n", b"hooks: \xff\n"];
    for yaml in cases {
        let dir = ScratchDir::new("cli-rejected");
        let file = dir.file("hooks.yaml");
        std::fs::write(&file, yaml).unwrap();
        for args in [vec!["check", file.as_str()], vec!["check", "--strict", file.as_str()]] {
            let output = hooks(&args);
            assert_eq!(output.status.code(), Some(1), "{yaml:?} {args:?}: {}", stderr(&output));
            assert!(stderr(&output).contains("document rejected"), "{yaml:?}: {}", stderr(&output));
        }
    }
    // A rejected file among good ones: the good ones are still listed.
    let valid = fixture("valid.yaml");
    let dir = ScratchDir::new("cli-rejected-mixed");
    let bad = dir.file("bad.yaml");
    std::fs::write(&bad, "hooks: nope\n").unwrap();
    let output = hooks(&["check", valid.to_str().unwrap(), &bad]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("5 hooks kept"), "{}", stdout(&output));
}

#[test]
fn check_bad_arguments_print_usage_and_exit_2() {
    for args in [
        vec![],
        vec!["check"],
        vec!["check", "--strict"],
        vec!["lint", "x.yaml"],
        vec!["check", "a.yaml", "--strcit"],
        vec!["check", "a.yaml", "--strict", "--strict"],
    ] {
        let output = hooks(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains("usage: hooks check FILE... [--strict]"), "{args:?}");
    }
    let help = hooks(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("usage: hooks check FILE... [--strict]"));
}

#[test]
fn check_missing_file_is_named_and_exits_2() {
    let output = hooks(&["check", "no/such/hooks.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot open `no/such/hooks.yaml`"), "{}", stderr(&output));
}

#[test]
fn check_a_directory_or_an_unreadable_file_exits_2() {
    let dir = ScratchDir::new("cli-dir");
    let path = dir.0.to_str().unwrap();
    for args in [vec!["check", path], vec!["check", path, "--strict"]] {
        let output = hooks(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(&format!("error: `{path}` is a directory")), "{}", stderr(&output));
    }
    // Opens, but every read fails (EIO at address 0); root can read any file by permissions.
    let output = hooks(&["check", "/proc/self/mem"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("error: cannot read `/proc/self/mem`"), "{}", stderr(&output));
}

#[test]
fn check_accepts_several_files_and_exits_with_the_worst_status() {
    let (valid, mixed) = (fixture("valid.yaml"), fixture("mixed.yaml"));
    let (valid, mixed) = (valid.to_str().unwrap(), mixed.to_str().unwrap());

    let output = hooks(&["check", valid, mixed]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let out = stdout(&output);
    assert!(out.contains(&format!("{valid}: 5 hooks kept, 0 entries skipped\n")), "{out}");
    assert!(out.contains(&format!("{mixed}: 2 hooks kept, 4 entries skipped\n")), "{out}");

    let strict = hooks(&["check", "--strict", valid, mixed]);
    assert_eq!(strict.status.code(), Some(1));
    assert!(stderr(&strict).contains(&format!("error: {mixed}: 5 problems (strict mode)")));
    assert!(!stderr(&strict).contains(&format!("error: {valid}")));

    // A file that cannot be read does not stop the others from being checked.
    let output = hooks(&["check", "--strict", "no/such.yaml", mixed]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).contains(&format!("{mixed}: 2 hooks kept")), "{}", stdout(&output));
}

/// Writes `yaml` to a file of its own and checks it in both modes; (lenient stderr, strict
/// status).
fn check_text(yaml: &str) -> (String, Option<i32>) {
    let dir = ScratchDir::new("cli-text");
    let file = dir.file("hooks.yaml");
    std::fs::write(&file, yaml).unwrap();
    let lenient = hooks(&["check", &file]);
    let strict = hooks(&["check", "--strict", &file]);
    let err = stderr(&lenient).replace(&file, "FILE");
    let rejected = err.contains("document rejected");
    assert_eq!(lenient.status.code(), Some(if rejected { 1 } else { 0 }), "{yaml}: {err}");
    (err, strict.status.code())
}

#[test]
fn check_warns_for_a_matcher_on_events_that_ignore_it() {
    for event in ["onError", "onStart", "onStop", "ON_ERROR"] {
        let (err, strict) = check_text(&format!(
            "hooks:\n  - event: {event}\n    matcher: \"file_*\"\n    action: {{type: log, message: m}}\n"
        ));
        assert!(err.contains("warning: FILE: entry #0 (field `matcher`): ignored for `"), "{event}: {err}");
        assert!(err.contains("only `preToolUse` and `postToolUse` use it"), "{err}");
        assert_eq!(strict, Some(1), "{event}");
    }
    let (err, _) = check_text("hooks:\n  - event: onError\n    matcher: x\n    action: {type: log, message: m}\n");
    assert!(err.contains("an `onError` hook runs for every failing tool"), "{err}");
    // Where the matcher counts, no warning.
    let (err, strict) =
        check_text("hooks:\n  - event: postToolUse\n    matcher: x\n    action: {type: log, message: m}\n");
    assert_eq!((err.as_str(), strict), ("", Some(0)));
}

#[test]
fn check_warns_for_an_empty_matcher() {
    let (err, strict) =
        check_text("hooks:\n  - event: preToolUse\n    matcher: \"\"\n    action: {type: log, message: m}\n");
    assert!(err.contains("warning: FILE: entry #0 (field `matcher`): the empty string matches no tool name"), "{err}");
    assert_eq!(strict, Some(1));
    let (err, strict) =
        check_text("hooks:\n  - event: preToolUse\n    matcher:\n    action: {type: log, message: m}\n");
    assert!(err.contains("warning: FILE: entry #0 (field `matcher`): empty, so it matches every tool"), "{err}");
    assert_eq!(strict, Some(1));
}

#[test]
fn check_an_empty_file_fails_strict_mode_but_an_empty_list_does_not() {
    for yaml in ["", "\n", "# only a comment\n", "---\n"] {
        let (err, strict) = check_text(yaml);
        assert!(err.contains("warning: FILE: document: empty; it declares no hooks"), "{yaml:?}: {err}");
        assert_eq!(strict, Some(1), "{yaml:?}");
    }
    for yaml in ["hooks: []\n", "hooks:\n"] {
        assert_eq!(check_text(yaml), (String::new(), Some(0)), "{yaml:?}");
    }
}

#[test]
fn y15_check_warns_for_every_shell_mode_command_that_splices_in_untrusted_values() {
    for name in ["tool", "error", "args", "result"] {
        let (err, strict) = check_text(&format!(
            "hooks:\n  - event: onError\n    action: {{type: command, command: \"echo '${{{name}}}' >> log\"}}\n"
        ));
        assert!(
            err.contains(&format!(
                "warning: FILE: entry #0 (field `action.command`): shell mode splices `${{{name}}}`"
            )),
            "{name}: {err}"
        );
        assert!(err.contains("add `mode: safe`"), "{err}");
        assert_eq!(strict, Some(1), "{name}");
    }
    // Each name once, in order of appearance, in one warning per entry.
    let (err, _) = check_text(
        "hooks:\n  - event: onError\n    action: {type: command, mode: shell, command: \"echo ${error} ${tool} ${error}\"}\n",
    );
    assert!(err.contains("splices `${error}`, `${tool}` into"), "{err}");
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    // Safe mode, values the file's author controls, and log actions are fine.
    for yaml in [
        "hooks:\n  - event: onError\n    action: {type: command, mode: safe, command: \"echo ${tool} ${error}\"}\n",
        "hooks:\n  - event: onStart\n    action: {type: command, command: \"echo ${agent}\"}\n",
        "hooks:\n  - event: onError\n    action: {type: log, message: \"${tool}: ${error}\"}\n",
    ] {
        assert_eq!(check_text(yaml), (String::new(), Some(0)), "{yaml}");
    }
}

#[test]
fn check_an_unknown_top_level_key_does_not_reject_the_document() {
    let dir = ScratchDir::new("cli-top-level");
    let file = dir.file("hooks.yaml");
    std::fs::write(&file, "other: 1\nhooks:\n  - event: onStart\n    action: {type: log, message: m}\n").unwrap();
    let output = hooks(&["check", &file]);
    assert!(stdout(&output).contains(&format!("{file}: 1 hook kept, 0 entries skipped\n")), "{}", stdout(&output));
    assert!(stderr(&output).contains("document (field `other`): unknown top-level key"), "{}", stderr(&output));
    assert_eq!(hooks(&["check", "--strict", &file]).status.code(), Some(1));
}

#[test]
fn y15_check_warns_for_a_safe_mode_value_that_bash_would_evaluate_as_arithmetic() {
    // With bash as `sh`, `$(( "${HOOK_TOOL}" ))` runs `cmd` for the value `a[$(cmd)]`.
    for command in ["echo $(( ${tool} + 1 ))", "(( ${error} > 0 )) && echo big", "[[ ${tool} -eq 1 ]] && echo one"] {
        let (err, strict) = check_text(&format!(
            "hooks:\n  - event: onError\n    action: {{type: command, mode: safe, command: \"{command}\"}}\n"
        ));
        assert!(err.contains("warning: FILE: entry #0 (field `action.command`): uses `$"), "{command}: {err}");
        assert!(err.contains("where bash (`sh` on some systems) evaluates a value"), "{err}");
        assert_eq!(strict, Some(1), "{command}");
    }
    // Outside arithmetic, or with a value the runtime makes, nothing to say.
    for command in ["echo ${tool} $(( 1 + 1 ))", "echo $(( ${latencyMs} / 1000 ))", "[ \\\"${tool}\\\" = x ]"] {
        let yaml =
            format!("hooks:\n  - event: onError\n    action: {{type: command, mode: safe, command: \"{command}\"}}\n");
        assert_eq!(check_text(&yaml), (String::new(), Some(0)), "{command}");
    }
}

#[test]
fn check_names_a_duplicate_key_in_its_own_words() {
    let (err, strict) =
        check_text("hooks:\n  - event: onStart\n    event: onStop\n    action: {type: log, message: m}\n");
    assert!(
        err.contains("warning: FILE: document: not valid YAML: the key `event` appears twice in one mapping; keep one of them at line 3, column 5"),
        "{err}"
    );
    assert!(!err.contains("DuplicateKeyPolicy"), "{err}");
    assert_eq!(strict, Some(1));
}

#[test]
fn y10_check_warns_for_a_placeholder_the_event_does_not_have_and_strict_fails() {
    let (err, strict) = check_text(
        "hooks:\n  - event: preToolUse\n    action: {type: log, message: \"${tol} took ${latencyMs} ms\"}\n",
    );
    assert_eq!(
        err,
        "warning: FILE: entry #0 (field `action.message`): `${tol}`, `${latencyMs}` stay as written: they are not a \
         context value of `preToolUse` hooks, which are `${tool}`, `${event}`; check the spelling\n"
    );
    assert_eq!(strict, Some(1));
    // In a command, the shell's own variables are the shell's; a lower-case name is still checked.
    let (err, strict) = check_text(
        "hooks:\n  - event: onError\n    action: {type: command, mode: safe, command: \"echo ${error} >> ${TMPDIR:-/tmp}/${HOOK_TOOL}.${erorr}\"}\n",
    );
    assert!(
        err.contains("(field `action.command`): `${erorr}` stays as written: it is not a context value of `onError`"),
        "{err}"
    );
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    assert_eq!(strict, Some(1));
    // onStop hooks get whatever `fire_event` passes: nothing to check.
    assert_eq!(
        check_text("hooks:\n  - event: onStop\n    action: {type: log, message: \"${reason}\"}\n"),
        (String::new(), Some(0))
    );
}

#[test]
fn check_refuses_a_fifo_or_a_device_at_once_instead_of_waiting_for_a_writer() {
    let dir = ScratchDir::new("cli-fifo");
    let fifo = dir.0.join("hooks.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo");
    assert!(made.success(), "mkfifo failed");
    let fifo = fifo.to_str().unwrap();
    for path in [fifo, "/dev/null"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hooks"))
            .args(["check", path])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run the hooks binary");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while child.try_wait().expect("wait for hooks").is_none() {
            if std::time::Instant::now() > deadline {
                child.kill().expect("kill hooks");
                panic!("`hooks check {path}` still runs after 10 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let output = child.wait_with_output().expect("read the output of hooks");
        assert_eq!(output.status.code(), Some(2), "{path}: {}", stderr(&output));
        assert!(
            stderr(&output).contains(&format!("error: `{path}` is not a regular file")),
            "{path}: {}",
            stderr(&output)
        );
    }
}
