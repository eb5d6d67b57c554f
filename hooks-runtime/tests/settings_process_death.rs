//! A settings hook's process group dies with the process that runs the runtime: a child
//! process (this test binary, run again as the child) runs a runtime whose PreToolUse hook
//! sleeps; the parent kills the child with SIGKILL and the hook's processes go too.
//!
//! Processes are found by a `sleep` argument unique to the test (`/proc/*/cmdline`).

#![cfg(all(feature = "declarative", target_os = "linux"))]

#[path = "support_processes/mod.rs"]
mod support_processes;

use std::process::Command;
use std::time::{Duration, Instant};

use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;
use support_processes::processes_with_arg;

define_prompt! { name: death_prompt, model: "scripted", prompt: "Ops.", tools: ["Bash"] }
define_agent! { name: death_agent, side_a: { prompt: death_prompt, stop_on_response: true, max_steps: 2 }, side_b: { human: true } }

/// The environment variable that makes this binary the child, with the `sleep` argument.
const CHILD: &str = "HOOKS_SETTINGS_DEATH_CHILD";

/// How long a killed process may take to disappear on a busy machine (the watchdog polls
/// each second).
const SETTLE: Duration = Duration::from_secs(20);

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < SETTLE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The child's part: a runtime whose PreToolUse hook sleeps far past the test. Does nothing
/// unless run as the child.
#[tokio::test]
async fn child_runs_a_runtime_with_a_hanging_hook() {
    let Ok(sleep) = std::env::var(CHILD) else { return };
    let settings = json!({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": format!("sleep {sleep}; sleep {sleep}"), "timeout": 600}
    ]}]}});
    let registry = SettingsHooks::from_json_strict(&settings.to_string()).unwrap();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "Bash", &json!({"command": "ls"}).to_string()),
        ScriptedResponse::text("done"),
    ]);
    let bash = FnTool::new("Bash", "Runs.", |_| async { HookToolResult::success("ok") });
    let runtime = Runtime::builder()
        .agent::<death_agent>()
        .model("scripted", model)
        .tool(bash)
        .settings_hooks(registry)
        .build()
        .unwrap();
    let thread = runtime.create_thread("death_agent", ThreadOptions::default()).await.unwrap();
    let _ = thread.send("go").await;
}

#[test]
fn k3_a_settings_hooks_process_group_dies_with_the_runtimes_process_on_sigkill() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let sleep = format!("{}.{}", 500, std::process::id());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_runs_a_runtime_with_a_hanging_hook", "--nocapture", "--test-threads", "1"])
        .env(CHILD, &sleep)
        .spawn()
        .unwrap();
    wait_until("the hook runs", || !processes_with_arg(&sleep).is_empty());
    child.kill().unwrap(); // SIGKILL: no destructor of the child runs
    child.wait().unwrap();
    wait_until("the hook's processes are gone", || processes_with_arg(&sleep).is_empty());
}

/// The environment variable that makes this binary the H2 child: the runtime's temporary
/// folder, and whether the child runs a turn (`run`) or only builds a runtime (`start`).
const TRANSCRIPT_CHILD: &str = "HOOKS_TRANSCRIPT_CHILD";

/// The H2 child's part, in the temporary folder its parent gave it (`TMPDIR`): `run` runs a
/// turn whose PreToolUse hook reads the transcript and then sleeps, until the parent kills it;
/// `start` builds a runtime with settings hooks and ends.
#[tokio::test]
async fn child_writes_a_transcript_or_starts() {
    let Ok(mode) = std::env::var(TRANSCRIPT_CHILD) else { return };
    let command = if mode == "run" { "cat >/dev/null; sleep 300" } else { "true" };
    let settings =
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command, "timeout": 600}]}]}});
    let registry = SettingsHooks::from_json_strict(&settings.to_string()).unwrap();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "Bash", &json!({"command": "ls"}).to_string()),
        ScriptedResponse::text("done"),
    ]);
    let bash = FnTool::new("Bash", "Runs.", |_| async { HookToolResult::success("ok") });
    let runtime = Runtime::builder()
        .agent::<death_agent>()
        .model("scripted", model)
        .tool(bash)
        .settings_hooks(registry)
        .build()
        .unwrap();
    if mode == "run" {
        let thread = runtime.create_thread("death_agent", ThreadOptions::default()).await.unwrap();
        let _ = thread.send("the thread's secret text").await;
    }
}

/// The transcripts folders in `dir`.
fn transcript_dirs(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("hooks-transcripts-"))
        .map(|entry| entry.path())
        .collect()
}

#[test]
fn h2_a_transcripts_folder_left_by_a_killed_process_is_removed_at_the_next_start() {
    if std::env::var(CHILD).is_ok() || std::env::var(TRANSCRIPT_CHILD).is_ok() {
        return;
    }
    let tmp = std::env::temp_dir().join(format!("h2-sigkill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).unwrap();
    let child = |mode: &str| {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child_writes_a_transcript_or_starts", "--nocapture", "--test-threads", "1"])
            .env(TRANSCRIPT_CHILD, mode)
            .env("TMPDIR", &tmp)
            .spawn()
            .unwrap()
    };
    let mut running = child("run");
    let has_transcript = || {
        transcript_dirs(&tmp).iter().any(|dir| {
            std::fs::read_dir(dir).is_ok_and(|mut files| {
                files.any(|file| {
                    file.is_ok_and(|file| {
                        std::fs::read_to_string(file.path()).is_ok_and(|text| text.contains("secret text"))
                    })
                })
            })
        })
    };
    wait_until("the hook runs with the transcript written", has_transcript);
    running.kill().unwrap(); // SIGKILL: no destructor of the child runs
    running.wait().unwrap();
    let left = transcript_dirs(&tmp);
    assert_eq!(left.len(), 1, "the killed process left its folder: {left:?}");

    // A folder of a process that runs (this one's parent, say) is not touched.
    let parent = std::os::unix::process::parent_id();
    let running_owner = tmp.join(format!("hooks-transcripts-{parent}-0123abcd"));
    std::fs::create_dir(&running_owner).unwrap();

    let status = child("start").wait().unwrap();
    assert!(status.success());
    assert!(!left[0].exists(), "removed at the next start: {}", left[0].display());
    assert!(running_owner.exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}
