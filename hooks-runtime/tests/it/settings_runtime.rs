//! Settings-format hooks as an operator sees them (CONFORMANCE K3, K4, K5, K6): what a failing,
//! over-talkative, conflicting or schema-violating hook logs at WARN, and that a hook never holds the async
//! runtime's worker while it runs.

#![cfg(all(feature = "declarative", unix))]

use crate::declarative_support;

use std::time::Duration;

use declarative_support::{Logs, ScratchDir};
use hooks_runtime::declarative::SettingsHooks;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::{Value, json};

define_prompt! { name: ops_prompt, model: "scripted", prompt: "Ops.", tools: ["Bash"] }
define_agent! { name: ops_agent, side_a: { prompt: ops_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

/// Runs one `Bash` call with `command` as its argument under the `PreToolUse` hooks `hooks`.
async fn one_call(hooks: Value, argument: &str) -> Vec<HookMessage> {
    let registry = SettingsHooks::from_json_strict(&json!({"hooks": {"PreToolUse": [{"hooks": hooks}]}}).to_string())
        .expect("valid settings");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "Bash", &json!({"command": argument}).to_string()),
        ScriptedResponse::text("done"),
    ]);
    let bash = FnTool::new("Bash", "Echoes.", |_| async { HookToolResult::success("ok") }).with_parameters(json!({
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    }));
    let runtime = Runtime::builder()
        .agent::<ops_agent>()
        .model("scripted", model)
        .tool(bash)
        .settings_hooks(registry)
        .build()
        .unwrap();
    let thread = runtime.create_thread("ops_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    thread.messages().await.unwrap()
}

#[tokio::test]
async fn k4_failures_are_logged_at_warn_naming_the_hook_and_what_went_wrong() {
    let (logs, _guard) = Logs::capture();
    one_call(
        json!([
            {"type": "command", "command": "echo 'guard broke' >&2; exit 1"},
            {"type": "command", "command": "echo '{oops'"},
            {"type": "command", "command": "sleep 5", "timeout": 0.2, "onFailure": "block"}
        ]),
        "ls",
    )
    .await;
    let warnings = logs.events("WARN").join("\n");
    for expected in [
        "[HOOK] settings hook hooks.PreToolUse[0].hooks[0] (`echo 'guard broke' >&2; exit 1`) failed: exited with code 1; it fails open, so it is ignored (its stderr, 11 bytes, is logged at DEBUG)",
        "[HOOK] settings hook hooks.PreToolUse[0].hooks[1] (`echo '{oops'`) failed: printed JSON that does not parse: ",
        "[HOOK] settings hook hooks.PreToolUse[0].hooks[2] (`sleep 5`) failed: did not finish within 200ms and was killed; it fails closed, so it denies",
    ] {
        assert!(warnings.contains(expected), "missing {expected:?} in:\n{warnings}");
    }
}

#[tokio::test]
async fn k3_output_over_the_cap_is_dropped_with_a_warn() {
    let (logs, _guard) = Logs::capture();
    one_call(json!([{"type": "command", "command": "head -c 1100000 /dev/zero | tr '\\0' x"}]), "ls").await;
    let warnings = logs.events("WARN").join("\n");
    assert!(
        warnings.contains(
            "[HOOK] settings hook hooks.PreToolUse[0].hooks[0]: stdout was cut at 1048576 bytes, 51424 more dropped"
        ),
        "{warnings}"
    );
}

#[tokio::test]
async fn k6_a_conflicting_rewrite_is_logged_with_the_key_and_both_hooks_never_the_values() {
    let (logs, _guard) = Logs::capture();
    let rewrite = |to: &str| {
        json!({"type": "command", "command": format!(
            r#"echo '{{"hookSpecificOutput": {{"permissionDecision": "allow", "updatedInput": {{"command": "{to}"}}}}}}'"#
        )})
    };
    let messages = one_call(json!([rewrite("ls SECRET-ONE"), rewrite("ls SECRET-TWO")]), "ls").await;
    let warnings = logs.events("WARN").join("\n");
    assert!(
        warnings.contains("failed: its updatedInput differs from the one hooks.PreToolUse[0].hooks[0] gave (in `command`); its rewrite is dropped; it fails open"),
        "{warnings}"
    );
    assert!(warnings.contains("settings hook hooks.PreToolUse[0].hooks[1] ("), "{warnings}");
    let result = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(result.content.as_deref(), Some("ok"));
    // The values can be secrets: the log names keys only (the commands are the file's own text).
    let without_commands = warnings.replace("ls SECRET-ONE\"}}}'", "").replace("ls SECRET-TWO\"}}}'", "");
    assert!(!without_commands.contains("SECRET"), "{warnings}");
}

#[tokio::test]
async fn k5_a_rewrite_the_schema_rejects_is_logged_with_the_schema_path_never_the_values() {
    let (logs, _guard) = Logs::capture();
    let rewrite = json!({"type": "command", "command":
        r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": ["SECRET-THREE"]}}}'"#});
    let messages = one_call(json!([rewrite]), "ls").await;
    let warnings = logs.events("WARN").join("\n");
    assert!(
        warnings.contains(
            "failed: its updatedInput is rejected: the arguments do not satisfy the tool's parameters schema at \
             `/command` (schema `/properties/command/type`); its rewrite is dropped; it fails open, so it is ignored"
        ),
        "{warnings}"
    );
    assert!(warnings.contains("[HOOK] settings hook hooks.PreToolUse[0].hooks[0] ("), "{warnings}");
    let result = messages.iter().find(|m| m.role == Role::Tool).unwrap();
    assert_eq!(result.content.as_deref(), Some("ok"), "the call ran, with the arguments as they were");
    let without_command = warnings.replace(r#"["SECRET-THREE"]}}}'"#, "");
    assert!(!without_command.contains("SECRET"), "{warnings}");
}

#[tokio::test]
async fn k3_a_running_hook_never_holds_the_async_runtimes_worker() {
    // `#[tokio::test]` has one worker thread. The hook waits for a file that a task on that
    // worker writes once the hook has started: the file comes only if the hook's wait leaves
    // the worker free. A hook that held it would give up waiting (after 2,000 rounds, some
    // 20 s) and, exiting 2, deny the call.
    let dir = ScratchDir::new("k3-worker");
    let (started, answered) = (dir.file("started"), dir.file("answered"));
    let answerer = {
        let (started, answered) = (started.clone(), answered.clone());
        tokio::spawn(async move {
            // The hook is an outside process: its file is polled.
            while !std::path::Path::new(&started).exists() {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            std::fs::write(&answered, "").unwrap();
        })
    };
    let command = format!(
        "touch '{started}'; i=0; while [ ! -e '{answered}' ]; do [ $i -lt 2000 ] || exit 2; sleep 0.01; i=$((i+1)); done"
    );
    let messages =
        one_call(json!([{"type": "command", "command": command, "timeout": 30, "onFailure": "block"}]), "ls").await;
    answerer.await.unwrap();
    let result = messages.iter().find(|m| m.role == Role::Tool).expect("a tool result");
    assert_eq!(result.content.as_deref(), Some("ok"), "the hook held the worker and timed out: {result:?}");
}
