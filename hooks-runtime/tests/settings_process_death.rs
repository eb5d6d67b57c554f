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
