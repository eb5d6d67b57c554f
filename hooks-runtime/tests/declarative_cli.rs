//! The `hooks check FILE [--strict]` command-line tool, run as a process on the fixtures.

mod declarative_support;

use std::process::{Command, Output};

use declarative_support::fixture;

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
        assert!(out.starts_with("kept  #0 preToolUse matcher=file_* log \"${tool} starting\"\n"), "{out}");
        assert!(out.contains("kept  #2 onError matcher=- command \"echo tool failed >> hooks.log\"\n"), "{out}");
        assert!(out.contains("kept  #4 onStop matcher=- command(safe) "), "{out}");
        assert!(out.contains("5 hooks kept, 0 entries skipped"), "{out}");
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
    let kept: Vec<&str> = out.lines().filter(|l| l.starts_with("kept")).collect();
    assert_eq!(
        kept,
        ["kept  #0 preToolUse matcher=file_* log \"${tool} starting\"", "kept  #5 onStart matcher=- command \"true\"",]
    );
    assert!(out.contains("2 hooks kept, 4 entries skipped"), "{out}");
    let err = stderr(&lenient);
    for expected in [
        "warning: entry #1 (field `event`): unknown event `beforeToolUse`",
        "warning: entry #2 (field `event`): missing",
        "warning: entry #3 (field `action.type`): unknown action type `email`; expected `log` or `command`",
        "warning: entry #4 (field `matcher`): expected a glob string",
        "warning: entry #4 (field `action.command`): missing",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in\n{err}");
    }

    let strict = hooks(&["check", file, "--strict"]);
    assert_eq!(strict.status.code(), Some(1));
    assert_eq!(stdout(&strict), out);
    assert!(stderr(&strict).contains("error: 5 problems (strict mode)"));
}

#[test]
fn y2_check_reports_an_unparseable_document() {
    let file = fixture("broken.yaml");
    let file = file.to_str().unwrap();
    let lenient = hooks(&["check", file]);
    assert_eq!(lenient.status.code(), Some(0));
    assert!(stderr(&lenient).contains("warning: document: not valid YAML"), "{}", stderr(&lenient));
    assert!(stdout(&lenient).contains("0 hooks kept, 0 entries skipped, document rejected"));
    assert_eq!(hooks(&["check", file, "--strict"]).status.code(), Some(1));
}

#[test]
fn check_bad_arguments_print_usage_and_exit_2() {
    for args in [
        vec![],
        vec!["check"],
        vec!["lint", "x.yaml"],
        vec!["check", "a.yaml", "b.yaml"],
        vec!["check", "a.yaml", "--strcit"],
        vec!["check", "a.yaml", "--strict", "--strict"],
    ] {
        let output = hooks(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains("usage: hooks check FILE [--strict]"), "{args:?}");
    }
    let help = hooks(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("usage: hooks check FILE [--strict]"));
}

#[test]
fn check_missing_file_is_named_and_exits_2() {
    let output = hooks(&["check", "no/such/hooks.yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("cannot open `no/such/hooks.yaml`"), "{}", stderr(&output));
}
