//! The runner, the answers and their combination, on real `sh` commands written here (K2-K4,
//! K6), and the `PreToolUse` evaluation the runtime applies.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::answer::{Answer, Permission};
use super::fire::{self, Given, Verdict};
use super::pre_tool_use::{self, PreToolUseAnswer, ToolCallInput, ToolVerdict};
use super::runner::{self, RunEnd};
use super::{MAX_SETTINGS_HOOK_OUTPUT_BYTES, SettingsEvent, SettingsHook, SettingsMatcher, SettingsReport};

/// How long a killed process may take to disappear on a busy machine.
const SETTLE: Duration = Duration::from_secs(10);

/// `PreToolUse` hooks of the given `(command, timeout seconds, fails closed)`, in one group
/// matching every tool.
fn pre_hooks(commands: &[(&str, u64, bool)]) -> Vec<SettingsHook> {
    let hooks: Vec<Value> = commands
        .iter()
        .map(|(command, timeout, closed)| {
            let mut hook = json!({"type": "command", "command": command, "timeout": timeout});
            if *closed {
                hook["onFailure"] = json!("block");
            }
            hook
        })
        .collect();
    let report = SettingsReport::from_json(&json!({"hooks": {"PreToolUse": [{"hooks": hooks}]}}).to_string());
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    report.kept
}

async fn evaluate(hooks: &[SettingsHook], arguments: Value) -> PreToolUseAnswer {
    evaluate_checked(hooks, arguments, &|_| Ok(())).await
}

async fn evaluate_checked(
    hooks: &[SettingsHook],
    arguments: Value,
    check: &(dyn Fn(&Value) -> Result<(), String> + Sync),
) -> PreToolUseAnswer {
    let call = ToolCallInput {
        once: None,
        session_id: "thread_1",
        tool_name: "Bash",
        tool_use_id: "call_1",
        arguments: &arguments,
        transcript_path: None,
    };
    pre_tool_use::evaluate(hooks, &call, &cwd(), check).await
}

/// The reason of hook `index` of the one group, as a decision carries it.
fn given(index: usize, reason: &str) -> Given {
    Given { hook: format!("settings:hooks.PreToolUse[0].hooks[{index}]"), reason: reason.to_owned() }
}

fn deny(index: usize, reason: &str) -> ToolVerdict {
    let Given { hook, reason } = given(index, reason);
    ToolVerdict::Deny { hook, reason }
}

fn cwd() -> PathBuf {
    std::env::current_dir().unwrap()
}

/// A `sleep` argument no other process uses, to find the test's processes in `/proc`.
fn unique_sleep() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{}.{}", 300 + NEXT.fetch_add(1, Ordering::SeqCst), std::process::id())
}

#[cfg(target_os = "linux")]
fn alive_with_arg(arg: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.filter_map(Result::ok).any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes()))
    })
}

#[cfg(target_os = "linux")]
async fn gone(arg: &str) {
    let started = Instant::now();
    while alive_with_arg(arg) {
        assert!(started.elapsed() < SETTLE, "a process with `{arg}` outlived its hook");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("settings-hooks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

// ---- K2: matchers -------------------------------------------------------------------------

#[test]
fn k2_matchers_follow_the_format() {
    let bash = SettingsMatcher::new("Bash").unwrap();
    assert!(bash.matches("Bash") && !bash.matches("bash") && !bash.matches("BashOutput"));
    let edits = SettingsMatcher::new("Edit|Write").unwrap();
    assert!(edits.matches("Edit") && edits.matches("Write") && !edits.matches("MultiEdit") && !edits.matches("Read"));
    let mcp = SettingsMatcher::new("mcp__.*").unwrap();
    assert!(mcp.matches("mcp__github__create_issue") && !mcp.matches("Bash"));
    let notebook = SettingsMatcher::new("Notebook.*").unwrap();
    assert!(notebook.matches("NotebookEdit") && !notebook.matches("Edit"));
    for every in ["", "*"] {
        let all = SettingsMatcher::new(every).unwrap();
        assert!(all.matches("Bash") && all.matches("mcp__x__y"), "{every:?}");
    }
    assert!(SettingsMatcher::new("Bash(").is_err());
}

#[test]
fn k2_a_group_matcher_selects_the_hooks_of_a_tool_event() {
    let report = SettingsReport::from_json(
        r#"{"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "a"}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "b"}]},
            {"matcher": "mcp__.*", "hooks": [{"type": "command", "command": "c"}]},
            {"matcher": "", "hooks": [{"type": "command", "command": "d"}]},
            {"hooks": [{"type": "command", "command": "e"}]}
        ]}}"#,
    );
    let selected = |tool: &str| -> Vec<&str> {
        report
            .kept
            .iter()
            .filter(|hook| hook.selects(SettingsEvent::PreToolUse, Some(tool), None))
            .map(|hook| hook.command())
            .collect()
    };
    assert_eq!(selected("Bash"), ["a", "d", "e"]);
    assert_eq!(selected("Write"), ["b", "d", "e"]);
    assert_eq!(selected("mcp__fs__read"), ["c", "d", "e"]);
    assert_eq!(selected("Read"), ["d", "e"]);
}

// ---- K3: the command, its input, its timeout ----------------------------------------------

#[tokio::test]
async fn k3_the_event_reaches_the_command_as_json_on_stdin() {
    let input = fire::input(
        SettingsEvent::PreToolUse,
        "thread_7",
        Path::new("/somewhere"),
        vec![("tool_name", json!("Bash")), ("tool_input", json!({"command": "ls"}))],
    );
    let run = runner::run("cat", &input, &cwd(), None, Duration::from_secs(30), "test", &[]).await;
    assert_eq!(run.end, RunEnd::Exited(0));
    let seen: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        seen,
        json!({"session_id": "thread_7", "hook_event_name": "PreToolUse", "cwd": "/somewhere",
               "permission_mode": "default", "tool_name": "Bash", "tool_input": {"command": "ls"}})
    );
}

#[tokio::test]
async fn k3_the_command_runs_in_the_working_directory() {
    let dir = scratch("cwd");
    let run = runner::run("pwd", b"", &dir, None, Duration::from_secs(30), "test", &[]).await;
    assert_eq!(Path::new(run.stdout.trim()).canonicalize().unwrap(), dir.canonicalize().unwrap());
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn k3_a_script_whose_child_holds_stdout_open_is_killed_at_its_timeout_with_its_group() {
    let sleep = unique_sleep();
    let started = Instant::now();
    // The child keeps stdout open and the shell waits: only the timeout ends the call.
    let command = format!("sleep {sleep} & echo started; wait");
    let run = runner::run(&command, b"", &cwd(), None, Duration::from_millis(500), "test", &[]).await;
    assert_eq!(run.end, RunEnd::TimedOut(Duration::from_millis(500)));
    assert!(started.elapsed() < SETTLE, "the call took {:?}", started.elapsed());
    assert_eq!(run.stdout, "started\n", "what it printed before the timeout is kept");
    gone(&sleep).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn k3_a_finished_shell_does_not_wait_for_a_background_child_holding_stdout() {
    let sleep = unique_sleep();
    let started = Instant::now();
    let command = format!(r#"sleep {sleep} & echo '{{"decision": "block", "reason": "r"}}'"#);
    // The deadline is the timeout (a minute), not stdout's end (the child's 300+ s).
    let run = runner::run(&command, b"", &cwd(), None, Duration::from_secs(60), "test", &[]).await;
    assert_eq!(run.end, RunEnd::Exited(0));
    assert!(started.elapsed() < SETTLE, "the call waited for stdout's end: {:?}", started.elapsed());
    assert!(run.stdout.contains("block"), "{run:?}");
    gone(&sleep).await;
}

#[tokio::test]
async fn k3_output_over_the_cap_is_cut_and_the_rest_dropped() {
    // 3 MiB on each stream; the call neither blocks on a full pipe nor keeps more than the cap.
    let command = "head -c 3145728 /dev/zero | tr '\\0' a; head -c 3145728 /dev/zero | tr '\\0' b >&2";
    let run = runner::run(command, b"", &cwd(), None, Duration::from_secs(60), "test", &[]).await;
    assert_eq!(run.end, RunEnd::Exited(0));
    assert_eq!(run.stdout.len(), MAX_SETTINGS_HOOK_OUTPUT_BYTES);
    assert_eq!(run.stderr.len(), MAX_SETTINGS_HOOK_OUTPUT_BYTES);
    assert!(run.stdout.bytes().all(|b| b == b'a') && run.stderr.bytes().all(|b| b == b'b'));
}

#[tokio::test]
async fn k3_a_hook_that_does_not_read_its_input_is_not_an_error() {
    let big = vec![b'x'; 4 * 1024 * 1024];
    let run = runner::run("exit 0", &big, &cwd(), None, Duration::from_secs(30), "test", &[]).await;
    assert_eq!(run.end, RunEnd::Exited(0));
}

// ---- K4 on real commands: exit 2, failures, fail closed -------------------------------------

#[tokio::test]
async fn k4_exit_2_denies_with_stderr_as_the_reason() {
    let hooks = pre_hooks(&[("echo 'rm -rf is not allowed' >&2; exit 2", 30, false)]);
    let answer = evaluate(&hooks, json!({"command": "rm -rf /"})).await;
    assert_eq!(answer.verdict, deny(0, "rm -rf is not allowed"));
}

#[tokio::test]
async fn k4_a_json_deny_on_stdout_denies() {
    let hooks = pre_hooks(&[(
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not here"}}'"#,
        30,
        false,
    )]);
    assert_eq!(evaluate(&hooks, json!({})).await.verdict, deny(0, "not here"));
}

#[tokio::test]
async fn k4_a_crashing_hook_fails_open_and_a_marked_one_closed() {
    for crash in ["exit 1", "kill -SEGV $$", "echo '{not json'", "/no/such/guard.sh"] {
        let open = evaluate(&pre_hooks(&[(crash, 30, false)]), json!({})).await;
        assert_eq!(open.verdict, ToolVerdict::Allow, "{crash}");
        let closed = evaluate(&pre_hooks(&[(crash, 30, true)]), json!({})).await;
        assert!(
            matches!(&closed.verdict, ToolVerdict::Deny { reason, .. } if reason.contains("fails closed")),
            "{crash}: {closed:?}"
        );
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn k4_a_fail_closed_hook_that_times_out_denies() {
    let sleep = unique_sleep();
    let hooks = pre_hooks(&[(&format!("sleep {sleep}"), 1, true)]);
    let started = Instant::now();
    let answer = evaluate(&hooks, json!({})).await;
    assert!(started.elapsed() < SETTLE);
    assert!(
        matches!(&answer.verdict, ToolVerdict::Deny { reason, .. } if reason.contains("did not finish within 1s")),
        "{answer:?}"
    );
    gone(&sleep).await;
    let open = evaluate(&pre_hooks(&[(&format!("sleep {sleep}"), 1, false)]), json!({})).await;
    assert_eq!(open.verdict, ToolVerdict::Allow, "fails open when not marked");
}

// ---- K6: concurrency and combination --------------------------------------------------------

#[tokio::test]
async fn k6_matching_hooks_run_concurrently() {
    // Each waits for the other's file: only hooks that run at the same time both finish.
    let dir = scratch("concurrent");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let wait_for = |mine: &Path, theirs: &Path| {
        format!(
            "touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; echo '{{\"hookSpecificOutput\": {{\"permissionDecision\": \"allow\"}}}}'",
            mine.display(),
            theirs.display()
        )
    };
    let (first, second) = (wait_for(&a, &b), wait_for(&b, &a));
    let hooks = pre_hooks(&[(&first, 20, true), (&second, 20, true)]);
    let answer = evaluate(&hooks, json!({})).await;
    assert_eq!(answer.verdict, ToolVerdict::Allow, "both finished: they ran at once");
}

fn answer(permission: Option<(Permission, &str)>) -> Answer {
    Answer { permission: permission.map(|(p, r)| (p, r.to_owned())), ..Answer::default() }
}

fn combined(answers: Vec<Answer>) -> ToolVerdict {
    let hooks = pre_hooks(&vec![("true", 1, false); answers.len()]);
    let verdict: Verdict = fire::combine(SettingsEvent::PreToolUse, hooks.iter().zip(answers), None);
    pre_tool_use::answer_of(verdict).verdict
}

#[test]
fn k6_decisions_combine_deny_over_ask_over_allow() {
    use Permission::*;
    assert_eq!(combined(vec![answer(Some((Ask, "a"))), answer(Some((Deny, "d")))]), deny(1, "d"));
    assert_eq!(
        combined(vec![answer(Some((Ask, "a"))), answer(Some((Allow, "")))]),
        ToolVerdict::Ask(vec![given(0, "a")])
    );
    assert_eq!(combined(vec![answer(Some((Deny, "d"))), answer(Some((Allow, "")))]), deny(0, "d"));
    assert_eq!(combined(vec![answer(Some((Allow, ""))), answer(None)]), ToolVerdict::Allow);
    assert_eq!(
        combined(vec![answer(Some((Deny, "one"))), answer(Some((Ask, "a"))), answer(Some((Deny, "two")))]),
        deny(0, "one; two")
    );
    assert_eq!(
        combined(vec![answer(Some((Ask, "first"))), answer(Some((Ask, "")))]),
        ToolVerdict::Ask(vec![given(0, "first"), given(1, "a PreToolUse hook asks for approval")]),
        "every asking hook is named, each with its reason"
    );
    assert_eq!(combined(vec![]), ToolVerdict::Allow);
}

fn rewriting(input: &str) -> String {
    format!(r#"echo '{{"hookSpecificOutput": {{"permissionDecision": "allow", "updatedInput": {input}}}}}'"#)
}

#[tokio::test]
async fn k10_an_updated_input_replaces_the_input_whole() {
    // A hook can drop a key: the tool gets exactly the hook's input, as in Claude Code.
    let dropping = rewriting(r#"{"command": "ls -la"}"#);
    let answer = evaluate(&pre_hooks(&[(&dropping, 30, false)]), json!({"command": "ls", "description": "list"})).await;
    assert_eq!(answer.verdict, ToolVerdict::Allow);
    assert_eq!(answer.arguments, Some(json!({"command": "ls -la"})));
    // Two hooks that give the same input agree.
    let hooks = pre_hooks(&[(&dropping, 30, false), (&dropping, 30, false)]);
    let answer = evaluate(&hooks, json!({"command": "ls", "description": "list"})).await;
    assert_eq!(answer.arguments, Some(json!({"command": "ls -la"})));
}

#[tokio::test]
async fn k6_a_conflicting_rewrite_is_the_later_hooks_failure_never_an_overwrite() {
    let (first, second) = (rewriting(r#"{"command": "ls -la"}"#), rewriting(r#"{"command": "rm -rf /", "x": 1}"#));
    // Different inputs conflict, whichever keys differ.
    let open = evaluate(&pre_hooks(&[(&first, 30, false), (&second, 30, false)]), json!({"command": "ls"})).await;
    assert_eq!(open.verdict, ToolVerdict::Allow);
    assert_eq!(open.arguments, Some(json!({"command": "ls -la"})), "the later hook's whole rewrite is dropped");

    let closed = evaluate(&pre_hooks(&[(&first, 30, false), (&second, 30, true)]), json!({"command": "ls"})).await;
    assert!(
        matches!(&closed.verdict, ToolVerdict::Deny { reason, .. } if reason.contains("`command`")),
        "a conflict of a hook that fails closed denies: {closed:?}"
    );
}

#[tokio::test]
async fn k6_an_ask_and_its_reason_come_back() {
    let ask =
        r#"echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "force push"}}'"#;
    let answer = evaluate(&pre_hooks(&[(ask, 30, false), ("true", 30, false)]), json!({})).await;
    assert_eq!(answer.verdict, ToolVerdict::Ask(vec![given(0, "force push")]));
}

#[tokio::test]
async fn k5_a_rewrite_the_check_rejects_is_its_hooks_failure() {
    // The check sees the whole arguments the rewrite would leave, as the tool would get them.
    let check = |arguments: &Value| {
        if arguments["command"] != "ls" {
            return Err("at `/command` (schema `/properties/command/const`)".to_owned());
        }
        match arguments.get("timeout") {
            Some(timeout) if !timeout.is_u64() => Err("at `/timeout` (schema `/properties/timeout/type`)".to_owned()),
            _ => Ok(()),
        }
    };
    let (good, bad) = (
        rewriting(r#"{"command": "ls", "description": "list"}"#),
        rewriting(r#"{"command": "ls", "timeout": "soon"}"#),
    );
    let accepted = evaluate_checked(&pre_hooks(&[(&good, 30, false)]), json!({"command": "ls"}), &check).await;
    assert_eq!(accepted.arguments, Some(json!({"command": "ls", "description": "list"})));

    let open = evaluate_checked(&pre_hooks(&[(&bad, 30, false)]), json!({"command": "ls"}), &check).await;
    assert_eq!((open.verdict, open.arguments), (ToolVerdict::Allow, None), "the arguments stay as they were");

    let closed = evaluate_checked(&pre_hooks(&[(&bad, 30, true)]), json!({"command": "ls"}), &check).await;
    assert!(
        matches!(&closed.verdict, ToolVerdict::Deny { hook, reason }
            if hook == "settings:hooks.PreToolUse[0].hooks[0]" && reason.contains("/properties/timeout/type")),
        "{closed:?}"
    );

    // Arguments the model wrote that the check rejects are no hook's failure when a rewrite
    // leaves them as they were.
    let same = rewriting(r#"{"command": "rm"}"#);
    let unchanged = evaluate_checked(&pre_hooks(&[(&same, 30, true)]), json!({"command": "rm"}), &check).await;
    assert_eq!(unchanged.verdict, ToolVerdict::Allow, "{unchanged:?}");
}
