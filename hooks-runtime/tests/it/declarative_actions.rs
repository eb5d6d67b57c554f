//! What the default executor does: `[HOOK]` log lines (Y8), shell commands with a timeout and a
//! capped failure report (Y9), `${name}` substitution (Y10) and the safe command mode.

#![cfg(feature = "declarative")]

use crate::declarative_support;
use crate::support_processes::processes_mentioning;

use std::path::Path;
use std::time::{Duration, Instant};

use declarative_support::{Logs, ScratchDir, TestAgent, ctx, journal};
use hooks_runtime::declarative::{
    DEFAULT_COMMAND_TIMEOUT, DeclarativeHookRegistry, DefaultHookExecutor, HookAction, HookConfig, HookEvent,
    HookMatcher, LOG_TARGET, MAX_OUTPUT_LINES,
};

fn on_stop(actions: impl IntoIterator<Item = HookAction>) -> DeclarativeHookRegistry {
    DeclarativeHookRegistry::of(actions.into_iter().map(|action| HookConfig::new(HookEvent::OnStop, None, action)))
}

#[tokio::test]
async fn y8_log_action_writes_hook_prefixed_info_under_the_executor_target() {
    let (logs, _guard) = Logs::capture();
    let registry = DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::PreToolUse,
        Some(HookMatcher::new("file_*")),
        HookAction::log("${tool} starting"),
    )]);
    let agent = TestAgent::new("a1", &["file_read"], journal());
    registry.apply_to(&agent).await;
    agent.call_tool("file_read", || Ok(String::new())).await.unwrap();

    let infos = logs.events("INFO");
    assert_eq!(infos, [format!(" INFO {LOG_TARGET}: [HOOK] file_read starting")]);
    assert_eq!(LOG_TARGET, "hooks_runtime::declarative::executor");
}

#[tokio::test]
async fn y8_log_actions_show_under_the_documented_filter_and_not_under_warn() {
    async fn logged_under(directives: &str) -> Vec<String> {
        let (logs, _guard) = Logs::capture_filtered(directives);
        let registry = DeclarativeHookRegistry::of([HookConfig::new(
            HookEvent::PreToolUse,
            None,
            HookAction::log("${tool} starting"),
        )]);
        let agent = TestAgent::new("a1", &["file_read"], journal());
        registry.apply_to(&agent).await;
        agent.call_tool("file_read", || Ok(String::new())).await.unwrap();
        logs.text().lines().filter(|line| line.contains("[HOOK]")).map(str::to_owned).collect()
    }
    // The filter docs/declarative-hooks.md and the declarative module's docs show.
    assert_eq!(
        logged_under("warn,hooks_runtime::declarative=info").await,
        [format!(" INFO {LOG_TARGET}: [HOOK] file_read starting")]
    );
    assert_eq!(logged_under("info").await.len(), 1);
    assert!(logged_under("warn").await.is_empty(), "a log action is INFO: a WARN filter hides it");
}

#[tokio::test]
async fn y9_command_runs_sh_in_the_process_working_directory() {
    let dir = ScratchDir::new("y9-cwd");
    let out = dir.file("pwd");
    // `$0` is the shell's name only under `sh -c`.
    on_stop([HookAction::command(format!("pwd > '{out}'; echo \"$0\" >> '{out}'"))])
        .fire_event(HookEvent::OnStop, &ctx(&[]))
        .await;
    let written = std::fs::read_to_string(&out).unwrap();
    let mut lines = written.lines();
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(Path::new(lines.next().unwrap()).canonicalize().unwrap(), cwd.canonicalize().unwrap());
    assert_eq!(lines.next(), Some("sh"));
}

#[tokio::test]
async fn y9_non_zero_exit_is_logged_at_warn_with_at_most_50_lines_of_output() {
    let (logs, _guard) = Logs::capture();
    on_stop([HookAction::command("i=1; while [ $i -le 60 ]; do echo out$i; i=$((i+1)); done; exit 3")])
        .fire_event(HookEvent::OnStop, &ctx(&[]))
        .await;

    let warns = logs.events("WARN");
    assert_eq!(warns.len(), 1, "{}", logs.text());
    let warn = &warns[0];
    assert!(warn.contains(&format!("WARN {LOG_TARGET}: [HOOK] command")), "{warn}");
    assert!(warn.contains("exit code 3"), "{warn}");
    assert!(warn.contains("first 50 of 60 lines, 10 cut"), "{warn}");
    let output: Vec<&str> = warn.lines().skip(1).collect();
    assert_eq!(output.len(), MAX_OUTPUT_LINES);
    assert_eq!(output.first(), Some(&"out1"));
    assert_eq!(output.last(), Some(&"out50"));
    assert!(!warn.contains("out51"));
}

#[tokio::test]
async fn e5_a_failed_command_is_logged_by_its_template_never_by_the_substituted_text() {
    let (logs, _guard) = Logs::capture();
    let registry = on_stop([
        HookAction::command("test -n \"${args}\" && exit 4"),
        HookAction::command_safe("test -n ${args} && exit 5"),
    ])
    .with_executor(DefaultHookExecutor::new());
    registry.fire_event(HookEvent::OnStop, &ctx(&[("args", "SECRET-ARGUMENT")])).await;

    let warns = logs.events("WARN");
    assert_eq!(warns.len(), 2, "{}", logs.text());
    assert!(warns[0].contains("command `test -n \"${args}\" && exit 4` failed with exit code 4"), "{}", warns[0]);
    assert!(warns[1].contains("command `test -n ${args} && exit 5` failed with exit code 5"), "{}", warns[1]);
    assert!(!logs.text().contains("SECRET-ARGUMENT"), "a substituted value reached the log: {}", logs.text());
}

#[tokio::test]
async fn y9_failure_report_includes_stderr_and_short_output_whole() {
    let (logs, _guard) = Logs::capture();
    on_stop([HookAction::command("echo to-stdout; echo to-stderr >&2; exit 1")])
        .fire_event(HookEvent::OnStop, &ctx(&[]))
        .await;
    let warn = &logs.events("WARN")[0];
    assert!(warn.contains("exit code 1, output (2 lines):"), "{warn}");
    assert!(warn.contains("\nto-stdout") && warn.contains("\nto-stderr"), "{warn}");

    // A command that succeeds logs nothing.
    let (logs, _guard) = Logs::capture();
    on_stop([HookAction::command("echo fine")]).fire_event(HookEvent::OnStop, &ctx(&[])).await;
    assert_eq!(logs.text(), "");
}

// Paused time: the command's timeout is a timer of tokio's clock, which jumps to it as soon as
// the test waits on the command; the command's own `sleep 1` is real, so it is still running.
#[tokio::test(start_paused = true)]
async fn y9_command_is_killed_after_the_timeout() {
    assert_eq!(DEFAULT_COMMAND_TIMEOUT, Duration::from_secs(30));
    assert_eq!(DefaultHookExecutor::new().command_timeout(), Duration::from_secs(30));

    let (logs, _guard) = Logs::capture();
    let dir = ScratchDir::new("y9-kill");
    let marker = dir.file("survived");
    let registry = on_stop([HookAction::command(format!("sleep 1; touch '{marker}'")), HookAction::log("next hook")])
        .with_executor(DefaultHookExecutor::new().with_command_timeout(Duration::from_millis(200)));

    registry.fire_event(HookEvent::OnStop, &ctx(&[])).await;

    let warn = &logs.events("WARN")[0];
    assert!(warn.contains("did not finish within 200ms and was killed"), "{warn}");
    assert!(logs.text().contains("[HOOK] next hook"));

    // Had the hook waited for the command, or left its shell running, the shell would write
    // the marker after its `sleep 1`: once no process mentions the marker, none can.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !processes_mentioning(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the command's shell outlived its timeout");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!Path::new(&marker).exists(), "the command was not killed");
}

#[tokio::test]
async fn y9_command_does_not_block_the_runtime_thread() {
    // `#[tokio::test]` runs on one thread. The command waits for a file that a task on that
    // thread writes once the command has started: the file comes only if the command's wait
    // leaves the thread free. A command that blocked it would give up waiting (after 2,000
    // rounds, some 20 s) without the file.
    let dir = ScratchDir::new("y9-thread");
    let (started, answered) = (dir.file("started"), dir.file("answered"));
    let registry = on_stop([HookAction::command(format!(
        "touch '{started}'; i=0; while [ ! -e '{answered}' ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done"
    ))]);
    let context = ctx(&[]);
    let fire = registry.fire_event(HookEvent::OnStop, &context);
    let answer = async {
        // The command is an outside process: its file is polled.
        while !Path::new(&started).exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        std::fs::write(&answered, "").unwrap();
        std::future::pending::<()>().await;
    };
    tokio::select! {
        () = fire => {}
        () = answer => unreachable!(),
    }
    assert!(Path::new(&answered).exists(), "the command blocked the thread: it ended without its answer");
}

#[tokio::test]
async fn y9_a_failing_command_does_not_stop_the_tool_call_or_the_other_hooks() {
    let (logs, _guard) = Logs::capture();
    let registry = DeclarativeHookRegistry::of([
        HookConfig::new(HookEvent::PreToolUse, None, HookAction::command("exit 7")),
        HookConfig::new(HookEvent::PreToolUse, None, HookAction::command("/nonexistent/program")),
        HookConfig::new(HookEvent::PreToolUse, None, HookAction::log("still here")),
        HookConfig::new(HookEvent::PostToolUse, None, HookAction::log("after ${tool}")),
    ]);
    let agent = TestAgent::new("a1", &["read"], journal());
    registry.apply_to(&agent).await;
    assert_eq!(agent.call_tool("read", || Ok("ok".into())).await, Ok("ok".into()));

    assert_eq!(logs.events("WARN").len(), 2, "{}", logs.text());
    let infos = logs.events("INFO");
    assert!(infos[0].ends_with("[HOOK] still here"), "{infos:?}");
    assert!(infos[1].ends_with("[HOOK] after read"), "{infos:?}");
}

#[tokio::test]
async fn y10_placeholders_are_replaced_and_unknown_names_stay_as_written() {
    let (logs, _guard) = Logs::capture();
    let dir = ScratchDir::new("y10");
    let out = dir.file("out");
    on_stop([
        HookAction::log("${agent} stopped, ${unknown} and ${} stay; $agent is no placeholder"),
        // Single quotes keep the shell from expanding the unsubstituted `${unknown}` itself.
        HookAction::command(format!("printf '%s|%s' ${{agent}} '${{unknown}}' > '{out}'")),
    ])
    .fire_event(HookEvent::OnStop, &ctx(&[("agent", "a1")]))
    .await;

    assert!(
        logs.text().contains("[HOOK] a1 stopped, ${unknown} and ${} stay; $agent is no placeholder"),
        "{}",
        logs.text()
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a1|${unknown}");
}

#[tokio::test]
async fn y10_shell_mode_splices_values_into_shell_text_as_the_reference_does() {
    // The reference behaviour, kept for `HookAction::command`: a value becomes shell syntax.
    // This also proves the safe-mode test below would notice an injection.
    let dir = ScratchDir::new("y10-shell");
    let pwned = dir.file("pwned");
    let registry = DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::PreToolUse,
        None,
        HookAction::command("echo ${tool} > /dev/null"),
    )]);
    let tool = format!("x; touch '{pwned}'");
    let agent = TestAgent::new("a1", &[tool.as_str()], journal());
    registry.apply_to(&agent).await;
    agent.call_tool(&tool, || Ok(String::new())).await.unwrap();
    assert!(Path::new(&pwned).exists());
}

#[tokio::test]
async fn y10_safe_mode_tool_name_with_shell_syntax_runs_nothing() {
    let dir = ScratchDir::new("y10-safe");
    let out = dir.file("out");
    let pwned = dir.file("pwned");
    let registry = DeclarativeHookRegistry::from_yaml_strict(&format!(
        r#"
hooks:
  - event: preToolUse
    action:
      type: command
      mode: safe
      command: "printf '%s\n' ${{tool}} \"${{tool}}\" '${{tool}}' > '{out}'; echo $HOOK_TOOL >> '{out}'"
"#
    ))
    .unwrap();
    let hostile = [
        "x; touch pwned".to_owned(),
        format!("x; touch '{pwned}'"),
        format!("$(touch '{pwned}')"),
        format!("`touch '{pwned}'`"),
        format!("x' ; touch '{pwned}' ; '"),
        format!("x\" ; touch \"{pwned}\" ; \""),
        "*".to_owned(),
    ];
    let agent = TestAgent::new("a1", &hostile.iter().map(String::as_str).collect::<Vec<_>>(), journal());
    registry.apply_to(&agent).await;
    let relative_pwned = std::env::current_dir().unwrap().join("pwned");
    let existed_before = relative_pwned.exists();

    for tool in &hostile {
        agent.call_tool(tool, || Ok(String::new())).await.unwrap();
        let written = std::fs::read_to_string(&out).unwrap();
        let lines: Vec<&str> = written.lines().collect();
        // Each placeholder, whatever its quoting, reached printf as exactly one argument.
        assert_eq!(&lines[..3], [tool.as_str(); 3], "{tool}");
        assert!(!Path::new(&pwned).exists(), "{tool} ran a command");
    }
    assert!(!existed_before && !relative_pwned.exists(), "`x; touch pwned` ran a command");
}

#[tokio::test]
async fn y10_safe_mode_exports_every_context_value_as_hook_env_vars() {
    let dir = ScratchDir::new("y10-env");
    let out = dir.file("env");
    let registry = DeclarativeHookRegistry::of([HookConfig::new(
        HookEvent::OnError,
        None,
        HookAction::command_safe(format!(
            "printf '%s|%s|%s|%s|%s' \"$HOOK_TOOL\" \"$HOOK_ERROR\" \"$HOOK_EVENT\" \"$HOOK_SUCCESS\" \"${{HOOK_LATENCY_MS:+set}}\" > '{out}'"
        )),
    )]);
    let agent = TestAgent::new("a1", &["read"], journal());
    registry.apply_to(&agent).await;
    agent.call_tool("read", || Err("it's $(bad)".into())).await.unwrap_err();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "read|it's $(bad)|postToolUse|false|set");
}
