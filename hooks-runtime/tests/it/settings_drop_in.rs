//! Claude Code hooks dropped in unchanged, as their scripts expect (CONFORMANCE K1 revised,
//! K7-K12): a guard never fails open by surprise, and the output fields mean what they mean
//! there. The hooks are small scripts written here, following that format's protocol.

#![cfg(all(feature = "declarative", unix))]

use crate::declarative_support;

use std::sync::{Arc, Mutex};

use declarative_support::{Logs, ScratchDir};
use hooks_runtime::approvals::ParkedToolCall;
use hooks_runtime::declarative::{SETTINGS_MESSAGE_EVENT, SETTINGS_STOP_EVENT, SessionEndReason, SettingsHooks};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{StopReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

define_prompt! { name: drop_prompt, model: "scripted", prompt: "Ops.", tools: ["Bash", "Write"] }
define_agent! { name: drop_agent, side_a: { prompt: drop_prompt, stop_on_response: true, max_steps: 6 }, side_b: { human: true } }

/// What one run under a settings file did.
struct Ran {
    /// The thread's messages.
    messages: Vec<HookMessage>,
    /// The arguments each tool call that ran got, `(tool, arguments)`.
    ran: Vec<(String, Value)>,
    /// The custom thread events, `(name, data)`.
    events: Vec<(String, Value)>,
    status: ThreadStatus,
    /// The model's requests, as it read them.
    model: ScriptedModel,
    /// The calls waiting for a person.
    pending: Vec<ParkedToolCall>,
}

impl Ran {
    /// The texts of the tool results, in order.
    fn results(&self) -> Vec<String> {
        self.messages.iter().filter(|m| m.role == Role::Tool).map(|m| m.content.clone().unwrap_or_default()).collect()
    }

    /// Everything the model was sent, as one text.
    fn model_read(&self) -> String {
        format!("{:?}", self.model.requests())
    }
}

fn recording_tool(name: &'static str, ran: &Arc<Mutex<Vec<(String, Value)>>>) -> FnTool {
    let ran = ran.clone();
    FnTool::new(name, "Records its arguments.", move |arguments| {
        let ran = ran.clone();
        async move {
            ran.lock().unwrap().push((name.to_owned(), arguments));
            HookToolResult::success("ok")
        }
    })
}

/// Runs `calls` (one per model step, then a text reply) under the settings file `settings`.
async fn run(settings: &Value, calls: &[(&str, Value)]) -> Ran {
    let registry = SettingsHooks::from_json(&settings.to_string());
    run_with(registry, calls).await
}

async fn run_with(registry: SettingsHooks, calls: &[(&str, Value)]) -> Ran {
    let mut script: Vec<ScriptedResponse> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, arguments))| ScriptedResponse::tool_call(&format!("call_{i}"), tool, &arguments.to_string()))
        .collect();
    script.push(ScriptedResponse::text("done"));
    run_script(registry, script).await
}

/// Runs the model's `script` under `registry`.
async fn run_script(registry: SettingsHooks, script: Vec<ScriptedResponse>) -> Ran {
    let model = ScriptedModel::new(script);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let runtime = Runtime::builder()
        .agent::<drop_agent>()
        .model("scripted", model.clone())
        .tool(recording_tool("Bash", &ran))
        .tool(recording_tool("Write", &ran).with_approval(|arguments| {
            if arguments["needs_approval"] == true {
                ToolDecision::ask("needs approval")
            } else {
                ToolDecision::allow()
            }
        }))
        .settings_hooks(registry)
        .build()
        .unwrap();
    let thread = runtime.create_thread("drop_agent", ThreadOptions::default()).await.unwrap();
    let mut subscription = thread.subscribe();
    thread.send("go").await.unwrap();
    let mut events = Vec::new();
    while let Ok(event) = subscription.try_recv() {
        if let ThreadEvent::Custom { event, data } = event {
            events.push((event, data));
        }
    }
    let ran = ran.lock().unwrap().clone();
    let pending = thread.pending_approvals().await.unwrap();
    Ran { messages: thread.messages().await.unwrap(), ran, events, status: thread.status(), model, pending }
}

fn pre_tool_use(matcher: &str, hooks: Value) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": matcher, "hooks": hooks}]}})
}

/// A hook command printing `output` as its JSON answer.
fn answering(output: Value) -> Value {
    json!({"type": "command", "command": format!("printf '%s' '{output}'")})
}

// ---- K1 revised --------------------------------------------------------------------------

#[tokio::test]
async fn k1_a_guard_with_fields_we_do_not_know_still_runs_and_denies() {
    let (logs, _guard) = Logs::capture();
    let guard = json!({"type": "command", "command": "echo 'no rm -rf' >&2; exit 2",
        "shell": "bash", "frobnicate": {"x": 1}, "statusMessage": "Checking"});
    let ran = run(&pre_tool_use("Bash", json!([guard])), &[("Bash", json!({"command": "rm -rf build"}))]).await;
    assert!(ran.ran.is_empty(), "the guard ran and denied: {:?}", ran.ran);
    assert!(ran.results()[0].contains("no rm -rf"), "{:?}", ran.results());
    let warnings = logs.events("WARN").join("\n");
    for field in ["shell", "frobnicate"] {
        assert!(
            warnings.contains(&format!("hooks.PreToolUse[0].hooks[0] (field `{field}`): unknown field, ignored")),
            "{warnings}"
        );
    }
}

#[tokio::test]
async fn k1_a_guard_that_cannot_run_denies_the_calls_its_matcher_selects_naming_the_entry() {
    let (logs, _guard) = Logs::capture();
    let settings = json!({"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "node \"${CLAUDE_PLUGIN_ROOT}/guard.js\""}]},
            {"matcher": "Write", "hooks": [{"type": "command", "command": "true", "onFailure": "blok"}]}
        ],
        // An observer that cannot run is a WARN, and guards nothing.
        "PostToolUse": [{"hooks": [{"type": "teleport", "command": "true"}]}]
    }});
    let ran =
        run(&settings, &[("Bash", json!({"command": "git push --force origin main"})), ("Write", json!({}))]).await;
    assert!(ran.ran.is_empty(), "neither guarded call ran: {:?}", ran.ran);
    let results = ran.results();
    assert!(
        results[0].contains("settings:hooks.PreToolUse[0].hooks[0]")
            && results[0].contains("the variable `CLAUDE_PLUGIN_ROOT`, which is not set"),
        "{results:?}"
    );
    assert!(results[1].contains("settings:hooks.PreToolUse[1].hooks[0]") && results[1].contains("`onFailure`"));
    let warnings = logs.events("WARN").join("\n");
    assert!(
        warnings.contains("hooks.PostToolUse[0].hooks[0] (field `type`): unknown hook type `teleport`"),
        "{warnings}"
    );

    // A tool the broken guard's matcher does not select runs.
    let only_bash = pre_tool_use("Bash", json!([{"type": "command", "command": "$NOT_SET_ANYWHERE_K1/g.sh"}]));
    let ran = run(&only_bash, &[("Write", json!({"path": "a"}))]).await;
    assert_eq!(ran.ran.len(), 1);
}

#[test]
fn k1_strict_loading_makes_every_problem_an_error() {
    let text = pre_tool_use("Bash", json!([{"type": "command", "command": "./g.sh", "shell": "bash"}])).to_string();
    assert_eq!(SettingsHooks::from_json(&text).hooks().len(), 1);
    let errors = SettingsHooks::from_json_strict(&text).unwrap_err();
    assert_eq!(errors.problems().len(), 1);
    assert_eq!(errors.problems()[0].field.as_deref(), Some("shell"));
}

// ---- K10 -----------------------------------------------------------------------------------

#[tokio::test]
async fn k10_continue_false_stops_the_turn_with_the_reason_for_the_person_not_the_model() {
    let stop = answering(json!({"continue": false, "stopReason": "Budget-exhausted-K10"}));
    let ran =
        run(&pre_tool_use("Bash", json!([stop])), &[("Bash", json!({"command": "ls"})), ("Write", json!({}))]).await;
    assert!(ran.ran.is_empty(), "the stopped call did not run: {:?}", ran.ran);
    assert_eq!(ran.status, ThreadStatus::Stopped(StopReason::HookStopped));
    let stops: Vec<&Value> =
        ran.events.iter().filter(|(name, _)| name == SETTINGS_STOP_EVENT).map(|(_, d)| d).collect();
    assert_eq!(stops.len(), 1, "{:?}", ran.events);
    assert_eq!(stops[0]["reason"], "Budget-exhausted-K10");
    assert_eq!(stops[0]["hook"], "settings:hooks.PreToolUse[0].hooks[0]");
    assert_eq!(ran.model.requests().len(), 1, "no model step after the stop");
    assert!(!format!("{:?}", ran.messages).contains("Budget-exhausted-K10"), "never stored for the model");

    // From PostToolUse: the call ran, and the turn stops before the next step.
    let settings =
        json!({"hooks": {"PostToolUse": [{"hooks": [answering(json!({"continue": false, "stopReason": "enough"}))]}]}});
    let ran = run(&settings, &[("Bash", json!({"command": "ls"})), ("Write", json!({}))]).await;
    assert_eq!(ran.ran.len(), 1);
    assert_eq!(ran.status, ThreadStatus::Stopped(StopReason::HookStopped));
    assert_eq!(ran.model.requests().len(), 1);
    assert!(!ran.model_read().contains("enough"));
}

#[tokio::test]
async fn k10_updated_input_replaces_the_tool_input() {
    let rewrite = answering(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}));
    let ran =
        run(&pre_tool_use("Bash", json!([rewrite])), &[("Bash", json!({"command": "ls", "description": "x"}))]).await;
    assert_eq!(ran.ran, [("Bash".to_owned(), json!({"command": "ls -la"}))], "a hook can drop a key");
}

#[tokio::test]
async fn k10_defer_passes_the_decision_on_and_is_no_failure() {
    let (logs, _guard) = Logs::capture();
    let defer =
        answering(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}}));
    let ran = run(&pre_tool_use("Bash", json!([defer.clone()])), &[("Bash", json!({"command": "ls"}))]).await;
    assert_eq!(ran.ran.len(), 1, "deferred to the next decider, which lets it run");
    assert!(!logs.events("WARN").join("\n").contains("failed"), "{}", logs.text());
    // Deferring never weakens another hook's deny.
    let deny = json!({"type": "command", "command": "echo stop >&2; exit 2"});
    let ran = run(&pre_tool_use("Bash", json!([defer, deny])), &[("Bash", json!({"command": "ls"}))]).await;
    assert!(ran.ran.is_empty());
}

#[tokio::test]
async fn k10_system_message_reaches_the_person_as_a_thread_event() {
    let hook = answering(json!({"systemMessage": "Heads-up-K10", "suppressOutput": true}));
    let ran = run(&pre_tool_use("Bash", json!([hook])), &[("Bash", json!({"command": "ls"}))]).await;
    let messages: Vec<&Value> =
        ran.events.iter().filter(|(name, _)| name == SETTINGS_MESSAGE_EVENT).map(|(_, d)| d).collect();
    assert_eq!(messages.len(), 1, "{:?}", ran.events);
    assert_eq!(messages[0]["message"], "Heads-up-K10");
    assert_eq!(messages[0]["event"], "PreToolUse");
    assert!(!ran.model_read().contains("Heads-up-K10"), "not for the model");
    assert_eq!(ran.ran.len(), 1);
}

#[tokio::test]
async fn k10_suppress_output_keeps_stdout_out_of_the_logs() {
    for (suppress, logged) in [(true, false), (false, true)] {
        let (logs, _guard) = Logs::capture_filtered("debug");
        let hook = answering(json!({"suppressOutput": suppress, "note": "Printed-K10-Marker"}));
        run(&pre_tool_use("Bash", json!([hook])), &[("Bash", json!({"command": "ls"}))]).await;
        assert_eq!(logs.text().contains("Printed-K10-Marker"), logged, "suppressOutput {suppress}:\n{}", logs.text());
    }
}

// ---- K9 -----------------------------------------------------------------------------------

/// A hook that allows every call, as many published "auto-approve" hooks do.
fn allowing() -> Value {
    answering(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}))
}

#[tokio::test]
async fn k9_permission_rules_govern_deny_over_ask_over_allow_and_a_hook_allow_skips_neither() {
    let settings = json!({
        "permissions": {"deny": ["Bash(git push:*)"], "ask": ["Bash(rm *)"], "allow": ["Bash", "Write"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [allowing()]}]}
    });
    let ran = run(
        &settings,
        &[("Bash", json!({"command": "git push --force origin main"})), ("Bash", json!({"command": "ls"}))],
    )
    .await;
    assert_eq!(ran.ran, [("Bash".to_owned(), json!({"command": "ls"}))]);
    assert!(
        ran.results()[0].contains("`settings:permissions.deny[0]`") && ran.results()[0].contains("Bash(git push:*)"),
        "{:?}",
        ran.results()
    );

    let ran = run(&settings, &[("Bash", json!({"command": "rm -rf build"}))]).await;
    assert!(ran.ran.is_empty(), "an ask rule waits for a person, whatever the hook said");
    assert_eq!(ran.status, ThreadStatus::AwaitingApproval);
    assert_eq!(ran.pending[0].reasons[0].hook.as_deref(), Some("settings:permissions.ask[0]"));

    // An allow rule stands in for the tool's own approval; without it, the call waits.
    let ran = run(&settings, &[("Write", json!({"needs_approval": true}))]).await;
    assert_eq!(ran.ran.len(), 1, "{:?}", ran.status);
    let ran = run(&json!({"hooks": {}}), &[("Write", json!({"needs_approval": true}))]).await;
    assert_eq!(ran.status, ThreadStatus::AwaitingApproval);
}

#[tokio::test]
async fn k9_a_handlers_if_selects_calls_with_the_rule_syntax() {
    let guard = json!({"type": "command", "command": "echo 'no git here' >&2; exit 2", "if": "Bash(git *)"});
    let settings = pre_tool_use("Bash", json!([guard]));
    let ran = run(&settings, &[("Bash", json!({"command": "git status"})), ("Bash", json!({"command": "ls"}))]).await;
    assert_eq!(ran.ran, [("Bash".to_owned(), json!({"command": "ls"}))]);
    assert!(ran.results()[0].contains("no git here"));
}

// ---- K7 -----------------------------------------------------------------------------------

/// A loop-until-done Stop hook as such hooks are published: it reads the last assistant text
/// from the transcript and blocks the stop until it says DONE. It keeps a copy for the test.
const LOOP_UNTIL_DONE: &str = r#"input=$(cat)
path=$(printf '%s' "$input" | jq -r '.transcript_path')
cp "$path" "$DIR/copy.jsonl"; printf '%s' "$path" > "$DIR/path"
last=$(grep '"role":"assistant"' "$path" | tail -1 | jq -r '.message.content | map(select(.type == "text")) | map(.text) | join("\n")')
case "$last" in *DONE*) exit 0;; esac
printf '{"decision": "block", "reason": "not done yet"}'
"#;

#[tokio::test]
async fn k7_transcript_path_names_the_threads_history_in_claude_codes_shape_current_when_the_hook_runs() {
    let dir = ScratchDir::new("k7");
    let command = format!("DIR='{}'; {LOOP_UNTIL_DONE}", dir.0.display());
    let settings = json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}});
    let registry = SettingsHooks::from_json_strict(&settings.to_string()).unwrap();
    let script = vec![
        ScriptedResponse::tool_call("call_1", "Bash", &json!({"command": "ls"}).to_string()),
        ScriptedResponse::text("working on it"),
        ScriptedResponse::text("all DONE"),
    ];
    let ran = run_script(registry, script).await;
    assert_eq!(ran.model.requests().len(), 3, "the hook read the transcript and continued the turn once");
    assert!(ran.messages.iter().any(|m| m.content.as_deref() == Some("not done yet")));

    let copy = std::fs::read_to_string(dir.0.join("copy.jsonl")).unwrap();
    let lines: Vec<Value> = copy.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let shape: Vec<(String, String)> = lines
        .iter()
        .map(|line| {
            let content = &line["message"]["content"];
            let first =
                if content.is_string() { "string".to_owned() } else { content[0]["type"].as_str().unwrap().to_owned() };
            (line["type"].as_str().unwrap().to_owned(), first)
        })
        .collect();
    let expected = [
        ("user", "string"),
        ("assistant", "tool_use"),
        ("user", "tool_result"),
        ("assistant", "text"),
        ("user", "string"),
        ("assistant", "text"),
    ];
    assert_eq!(shape, expected.map(|(a, b)| (a.to_owned(), b.to_owned())), "{copy}");
    assert_eq!(lines[0]["message"], json!({"role": "user", "content": "go"}));
    assert_eq!(
        lines[1]["message"]["content"][0],
        json!({"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": "ls"}})
    );
    assert_eq!(lines[2]["message"]["content"][0]["tool_use_id"], "call_1");
    assert_eq!(lines[2]["message"]["content"][0]["content"], "ok");
    assert_eq!(lines[5]["message"]["content"][0]["text"], "all DONE", "current when the hook ran");
    assert_eq!(lines[1]["parentUuid"], lines[0]["uuid"]);

    // Removed with the runtime.
    let path = std::fs::read_to_string(dir.0.join("path")).unwrap();
    assert!(!std::path::Path::new(&path).exists(), "{path} outlived its runtime");
}

// ---- K8 -----------------------------------------------------------------------------------

#[tokio::test]
async fn k8_a_plugin_folder_loads_and_its_commands_see_plugin_root_and_project_dir() {
    let plugin = ScratchDir::new("k8-plugin");
    std::fs::create_dir_all(plugin.0.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plugin.0.join("hooks")).unwrap();
    std::fs::write(plugin.0.join(".claude-plugin/plugin.json"), r#"{"name": "git-guard", "version": "1.0.0"}"#)
        .unwrap();
    std::fs::write(
        plugin.0.join("hooks/hooks.json"),
        r#"{"description": "Git safety", "hooks": {"PreToolUse": [{"matcher": "Bash",
            "hooks": [{"type": "command", "command": "sh \"${CLAUDE_PLUGIN_ROOT}/guard.sh\""}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        plugin.0.join("guard.sh"),
        r#"printf '%s\n%s\n' "$CLAUDE_PLUGIN_ROOT" "$CLAUDE_PROJECT_DIR" > "$CLAUDE_PLUGIN_ROOT/env.txt"
case "$(cat)" in *"push --force"*) echo "force push blocked by the plugin" >&2; exit 2;; esac
"#,
    )
    .unwrap();
    let plugin_hooks = SettingsHooks::from_plugin_dir_strict(&plugin.0).unwrap();
    assert_eq!(plugin_hooks.hooks()[0].location(), "plugin:git-guard:hooks.PreToolUse[0].hooks[0]");
    let project = SettingsHooks::from_json_strict(r#"{"hooks": {}}"#).unwrap();
    let registry = project.with_hooks_of(&plugin_hooks);
    let ran = run_with(
        registry,
        &[("Bash", json!({"command": "git push --force origin main"})), ("Bash", json!({"command": "git status"}))],
    )
    .await;
    assert_eq!(ran.ran, [("Bash".to_owned(), json!({"command": "git status"}))]);
    assert!(ran.results()[0].contains("force push blocked by the plugin"), "{:?}", ran.results());
    let env = std::fs::read_to_string(plugin.0.join("env.txt")).unwrap();
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(env, format!("{}\n{}\n", plugin.0.display(), cwd.display()));

    // The same command outside a plugin cannot run: it guards by denying.
    let hooks = std::fs::read_to_string(plugin.0.join("hooks/hooks.json")).unwrap();
    let outside = SettingsHooks::from_json(&hooks);
    assert!(outside.hooks()[0].cannot_run().is_some());
}

// ---- K11 ----------------------------------------------------------------------------------

#[tokio::test]
async fn k11_permission_request_decides_a_would_be_approval_at_once_in_the_hooks_name() {
    let decide = |behavior: &str| {
        answering(json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, "message": "not-today-K11"}}}))
    };
    let settings =
        |behavior: &str| json!({"hooks": {"PermissionRequest": [{"matcher": "Write", "hooks": [decide(behavior)]}]}});
    let ran = run(&settings("allow"), &[("Write", json!({"needs_approval": true}))]).await;
    assert_eq!(ran.ran.len(), 1, "approved by the hook: {:?}", ran.status);
    assert!(ran.pending.is_empty());
    let decided = ran.events.iter().find(|(name, _)| name == "settings_hook_approval").expect("recorded");
    assert_eq!(
        decided.1,
        json!({"hook": "settings:hooks.PermissionRequest[0].hooks[0]", "call": "call_0", "decision": "approved"})
    );

    let ran = run(&settings("deny"), &[("Write", json!({"needs_approval": true}))]).await;
    assert!(ran.ran.is_empty() && ran.pending.is_empty());
    assert!(
        ran.results()[0].contains("`settings:hooks.PermissionRequest[0].hooks[0]`: not-today-K11"),
        "{:?}",
        ran.results()
    );

    // A call that needs no approval never fires it.
    let dir = ScratchDir::new("k11-pr");
    let record = json!({"type": "command", "command": format!("cat > '{}/fired'", dir.0.display())});
    let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [record]}]}});
    run(&settings, &[("Write", json!({}))]).await;
    assert!(!dir.0.join("fired").exists());
}

#[tokio::test]
async fn k11_notification_fires_when_a_call_waits_for_a_person() {
    let dir = ScratchDir::new("k11-notify");
    let record = json!({"type": "command", "command": format!("cat > '{}/notification.json'", dir.0.display())});
    let settings = json!({"hooks": {"Notification": [{"hooks": [record]}]}});
    let ran = run(&settings, &[("Write", json!({"needs_approval": true}))]).await;
    assert_eq!(ran.status, ThreadStatus::AwaitingApproval);
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.0.join("notification.json")).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "Notification");
    assert_eq!(input["notification_type"], "permission_prompt");
    assert!(input["message"].as_str().unwrap().contains("Write"));
}

/// A runtime of `drop_agent` under `settings`, its model answering `done` to every message.
fn session_runtime(settings: &Value) -> Runtime {
    let registry = SettingsHooks::from_json(&settings.to_string());
    let replies: Vec<ScriptedResponse> = (0..4).map(|_| ScriptedResponse::text("done")).collect();
    let ran = Arc::new(Mutex::new(Vec::new()));
    Runtime::builder()
        .agent::<drop_agent>()
        .model("scripted", ScriptedModel::new(replies))
        .tool(recording_tool("Bash", &ran))
        .tool(recording_tool("Write", &ran))
        .settings_hooks(registry)
        .build()
        .unwrap()
}

/// The inputs the recording `SessionEnd` hooks of `dir` got, a JSON object a line.
fn session_ends(dir: &ScratchDir, file: &str) -> Vec<Value> {
    std::fs::read_to_string(dir.0.join(file))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn k11_session_end_fires_once_per_thread_session_with_claude_codes_input() {
    let dir = ScratchDir::new("k11-session-end");
    // Each input as one line: the input is one line of JSON, and `printf` ends it.
    let record = |file: &str| json!({"type": "command", "command": format!("printf '%s\\n' \"$(cat)\" >> '{}/{file}'", dir.0.display())});
    // The transcript as the hook saw it, read while it runs.
    let copy = json!({"type": "command",
        "command": format!("cat \"$(jq -r .transcript_path)\" >> '{}/transcripts'", dir.0.display())});
    let settings = json!({"hooks": {"SessionEnd": [
        {"hooks": [record("all"), copy]},
        {"matcher": "clear", "hooks": [record("cleared")]}
    ]}});
    let runtime = session_runtime(&settings);
    let talked = runtime.create_thread("drop_agent", ThreadOptions::default()).await.unwrap();
    talked.send("hello-K11").await.unwrap();
    let idle = runtime.create_thread("drop_agent", ThreadOptions::default()).await.unwrap();
    // Opened again while its session is open: still one session.
    runtime.open_thread(talked.id()).await.unwrap();
    assert!(session_ends(&dir, "all").is_empty(), "nothing ends a session but the application");

    assert_eq!(runtime.end_sessions(SessionEndReason::Other).await, 2);
    let ends = session_ends(&dir, "all");
    let mut ids: Vec<&str> = ends.iter().map(|input| input["session_id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    let mut expected = vec![talked.id(), idle.id()];
    expected.sort_unstable();
    assert_eq!(ids, expected, "one SessionEnd per thread session: {ends:#?}");
    let cwd = std::env::current_dir().unwrap();
    for input in &ends {
        assert_eq!(input["hook_event_name"], "SessionEnd");
        assert_eq!(input["reason"], "other");
        assert_eq!(input["cwd"], cwd.to_string_lossy().as_ref());
        assert!(input["transcript_path"].as_str().is_some_and(|path| path.ends_with(".jsonl")), "{input}");
    }
    assert!(std::fs::read_to_string(dir.0.join("transcripts")).unwrap().contains("hello-K11"));
    assert!(session_ends(&dir, "cleared").is_empty(), "the `clear` matcher does not select `other`");

    // Ended sessions do not end again; a thread opened again begins a new one.
    assert_eq!(runtime.end_sessions(SessionEndReason::Other).await, 0);
    assert!(!runtime.end_session(idle.id(), SessionEndReason::Clear).await);
    runtime.open_thread(idle.id()).await.unwrap();
    assert!(runtime.end_session(idle.id(), SessionEndReason::Clear).await);
    let cleared = session_ends(&dir, "cleared");
    assert_eq!(cleared.len(), 1);
    assert_eq!((cleared[0]["session_id"].as_str(), cleared[0]["reason"].as_str()), (Some(idle.id()), Some("clear")));
    assert_eq!(session_ends(&dir, "all").len(), 3);
}

#[tokio::test]
async fn k11_session_end_observes_only_and_a_runtime_dropped_with_sessions_open_warns() {
    let (logs, _guard) = Logs::capture();
    // Exit 2 and `continue: false` decide nothing at the end of a session.
    let settings = json!({"hooks": {"SessionEnd": [{"hooks": [
        {"type": "command", "command": "echo 'no-K11' >&2; exit 2"},
        answering(json!({"continue": false, "stopReason": "stay"}))
    ]}]}});
    let runtime = session_runtime(&settings);
    let thread = runtime.create_thread("drop_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(runtime.end_sessions(SessionEndReason::PromptInputExit).await, 1);
    let outcome = thread.send("still here").await.unwrap().into_result().unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("done"), "the thread still works");

    // Opened again and never ended: the drop says whose hooks never ran.
    runtime.open_thread(thread.id()).await.unwrap();
    drop(thread);
    drop(runtime);
    let warnings = logs.events("WARN").join("\n");
    assert!(
        warnings.contains("the SessionEnd hooks of 1 thread session(s) never ran")
            && warnings.contains("`Runtime::end_sessions`"),
        "{warnings}"
    );
}

// ---- K12 ----------------------------------------------------------------------------------

#[tokio::test]
async fn k12_an_async_hook_runs_without_holding_the_event_and_its_output_is_ignored() {
    let dir = ScratchDir::new("k12-async");
    let marker = dir.0.join("ran");
    let hook = json!({"type": "command", "async": true,
        "command": format!("cat > '{}.tmp'; mv '{0}.tmp' '{0}'; echo 'would deny' >&2; exit 2", marker.display())});
    let ran = run(&pre_tool_use("Bash", json!([hook])), &[("Bash", json!({"command": "ls"}))]).await;
    assert_eq!(ran.ran.len(), 1, "its exit 2 decided nothing: {:?}", ran.results());
    // It did run, on its own: wait for its file (bounded, never a timing assertion).
    for _ in 0..500 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    assert_eq!(input["tool_name"], "Bash");
}

#[tokio::test]
async fn k12_a_once_hook_runs_once_per_thread() {
    let dir = ScratchDir::new("k12-once");
    let log = dir.0.join("log");
    let hook = json!({"type": "command", "once": true, "command": format!("echo ran >> '{}'", log.display())});
    let calls =
        [("Bash", json!({"command": "a"})), ("Bash", json!({"command": "b"})), ("Bash", json!({"command": "c"}))];
    let ran = run(&pre_tool_use("Bash", json!([hook])), &calls).await;
    assert_eq!(ran.ran.len(), 3);
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "ran\n");
}

#[tokio::test]
async fn k2_build_warns_on_a_matcher_that_names_none_of_the_runtimes_tools() {
    let (logs, _guard) = Logs::capture();
    let settings = pre_tool_use("bash", json!([{"type": "command", "command": "exit 2"}]));
    let ran = run(&settings, &[("Bash", json!({"command": "ls"}))]).await;
    assert_eq!(ran.ran.len(), 1, "`bash` does not match `Bash`, as in Claude Code");
    let warnings = logs.events("WARN").join("\n");
    assert!(
        warnings.contains("settings hooks: hooks.PreToolUse[0] (field `matcher`): `bash` names none of the tools (`Bash`, `Write`), so")
            && warnings.contains("did you mean `Bash`?"),
        "{warnings}"
    );
}

define_prompt! { name: k2_helper_prompt, model: "scripted", prompt: "Help." }
define_agent! {
    name: k2_helper,
    expose_as_tool: true,
    tool_description: "Helps.",
    side_a: { prompt: k2_helper_prompt },
    side_b: { human: true },
}
define_prompt! { name: k2_parent_prompt, model: "scripted", prompt: "Ops.", tools: ["Bash"] }
define_agent! {
    name: k2_parent,
    side_a: { prompt: k2_parent_prompt, subagents: [{ agent: k2_helper }], stop_on_response: true },
    side_b: { human: true },
}

#[test]
fn k2_the_matcher_warning_counts_a_subagent_the_model_can_call_and_no_other_agent() {
    let (logs, _guard) = Logs::capture();
    let never = json!([{"type": "command", "command": "exit 0"}]);
    let settings = json!({"hooks": {"PreToolUse": [
        {"matcher": "k2_helper", "hooks": never},
        {"matcher": "k2_parent", "hooks": never},
    ]}});
    let hooks = SettingsHooks::from_json_strict(&settings.to_string()).unwrap();
    let bash = FnTool::new("Bash", "Runs a command.", |_args: Value| async { HookToolResult::success("") });
    Runtime::builder()
        .agent::<k2_parent>()
        .model("scripted", ScriptedModel::new([]))
        .tool(bash)
        .settings_hooks(hooks)
        .build()
        .unwrap();
    let warnings = logs.events("WARN").join("\n");
    // The subagent is a tool of the parent's model: its matcher selects calls.
    assert!(!warnings.contains("hooks.PreToolUse[0]"), "{warnings}");
    // An agent that no prompt offers and no relationship names is no tool.
    assert!(
        warnings.contains("hooks.PreToolUse[1] (field `matcher`): `k2_parent` names none of the tools (`Bash`, `k2_helper`), so its hooks never run"),
        "{warnings}"
    );
}

/// A one-request HTTP server on 127.0.0.1: answers `answer` as JSON and hands back the request
/// it got (head and body).
async fn one_request_server(answer: Value) -> (String, tokio::task::JoinHandle<(String, String)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hooks/pre-tool-use", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        serve_one(stream, &answer).await
    });
    (url, served)
}

/// Reads one request from `stream`, answers `answer` as JSON; the request's head and body.
async fn serve_one(mut stream: impl AsyncRead + AsyncWrite + Unpin, answer: &Value) -> (String, String) {
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let read = stream.read(&mut buffer).await.unwrap();
        request.extend_from_slice(&buffer[..read]);
        let text = String::from_utf8_lossy(&request).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length: usize = head
                .lines()
                .find_map(|line| {
                    line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= length || read == 0 {
                let body_text = answer.to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body_text}",
                    body_text.len()
                );
                stream.write_all(response.as_bytes()).await.unwrap();
                stream.shutdown().await.unwrap();
                return (head.to_owned(), body.to_owned());
            }
        }
    }
}

/// A test certificate of `tests/fixtures/tls` (see its README).
fn tls_fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls").join(name)
}

/// A one-request HTTPS server on 127.0.0.1 whose certificate (for `127.0.0.1`) the test CA
/// `ca.pem` issued: answers `answer` as JSON and hands back the request, or the handshake's
/// error when the client refused the certificate.
async fn one_tls_request_server(answer: Value) -> (String, tokio::task::JoinHandle<Result<(String, String), String>>) {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls::{ServerConfig, crypto};
    let chain: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(tls_fixture("server.pem")).unwrap().map(Result::unwrap).collect();
    let key = PrivateKeyDer::from_pem_file(tls_fixture("server.key")).unwrap();
    let config = ServerConfig::builder_with_provider(std::sync::Arc::new(crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://{}/hooks/pre-tool-use", listener.local_addr().unwrap());
    let served = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let stream = acceptor.accept(stream).await.map_err(|error| error.to_string())?;
        Ok(serve_one(stream, &answer).await)
    });
    (url, served)
}

#[tokio::test]
async fn k12_an_http_hook_posts_the_event_and_its_response_body_decides() {
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "http-says-no"}});
    let (url, served) = one_request_server(answer).await;
    let hook = json!({"type": "http", "url": url, "timeout": 10,
        "headers": {"X-Home": "home=$HOME", "X-Path": "path=${PATH}"}, "allowedEnvVars": ["HOME"]});
    let ran = run(&pre_tool_use("Bash", json!([hook])), &[("Bash", json!({"command": "rm -rf build"}))]).await;
    assert!(ran.ran.is_empty());
    assert!(ran.results()[0].contains("http-says-no"), "{:?}", ran.results());
    let (head, body) = served.await.unwrap();
    assert!(head.starts_with("POST /hooks/pre-tool-use HTTP/1.1\r\n"), "{head}");
    let headers: Vec<&str> = head.lines().collect();
    assert!(headers.contains(&format!("X-Home: home={}", std::env::var("HOME").unwrap()).as_str()), "{head}");
    assert!(headers.contains(&"X-Path: path="), "a variable not allowed expands to nothing: {head}");
    let event: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((event["hook_event_name"].as_str(), event["tool_name"].as_str()), (Some("PreToolUse"), Some("Bash")));
}

/// Where the child process of `k12_https_...trusts_the_ca_node_extra_ca_certs_names` finds its
/// server: the variable is set for that child only.
const HTTPS_CHILD_URL: &str = "HOOKS_K12_HTTPS_CHILD_URL";

#[tokio::test]
async fn k12_https_hook_trusts_the_ca_that_node_extra_ca_certs_names() {
    let name = "settings_drop_in::k12_https_hook_trusts_the_ca_that_node_extra_ca_certs_names";
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "https-says-no"}});
    // The child: this test run again with `NODE_EXTRA_CA_CERTS` set, which is read once per
    // process (a test cannot set a variable in its own process: `set_var` is unsafe).
    if let Ok(url) = std::env::var(HTTPS_CHILD_URL) {
        let hook = json!({"type": "http", "url": url, "timeout": 20, "onFailure": "block"});
        let ran = run(&pre_tool_use("Bash", json!([hook])), &[("Bash", json!({"command": "rm -rf build"}))]).await;
        assert!(ran.ran.is_empty());
        assert!(ran.results()[0].contains("https-says-no"), "{:?}", ran.results());
        return;
    }
    let (url, served) = one_tls_request_server(deny).await;
    let child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(HTTPS_CHILD_URL, &url)
        .env("NODE_EXTRA_CA_CERTS", tls_fixture("ca.pem"))
        .output()
        .await
        .unwrap();
    let output = format!("{}{}", String::from_utf8_lossy(&child.stdout), String::from_utf8_lossy(&child.stderr));
    assert!(child.status.success() && output.contains("1 passed"), "{output}");
    let (head, body) = served.await.unwrap().expect("the hook trusted the server");
    assert!(head.starts_with("POST /hooks/pre-tool-use HTTP/1.1\r\n"), "{head}");
    let event: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((event["hook_event_name"].as_str(), event["tool_name"].as_str()), (Some("PreToolUse"), Some("Bash")));
}

#[tokio::test]
async fn k12_https_hook_to_an_untrusted_certificate_fails_closed_naming_the_tls_error() {
    let (logs, _guard) = Logs::capture();
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}});
    // This process trusts the built-in roots only: the test CA is unknown.
    let (url, served) = one_tls_request_server(allow.clone()).await;
    let guard = json!({"type": "http", "url": url, "timeout": 20, "onFailure": "block"});
    let ran = run(&pre_tool_use("Bash", json!([guard])), &[("Bash", json!({"command": "ls"}))]).await;
    assert!(ran.ran.is_empty(), "a guard that could not be asked denies");
    let result = &ran.results()[0];
    assert!(
        result.contains("settings:hooks.PreToolUse[0].hooks[0]")
            && result.contains(&format!("could not POST to {url}"))
            && result.contains("invalid peer certificate: UnknownIssuer"),
        "{result}"
    );
    assert!(served.await.unwrap().is_err(), "the request never reached the server");

    // Without `onFailure: block` it fails open, as in Claude Code, with a WARN naming the error.
    let (url, _served) = one_tls_request_server(allow).await;
    let observer = json!({"type": "http", "url": url, "timeout": 20});
    let ran = run(&pre_tool_use("Bash", json!([observer])), &[("Bash", json!({"command": "ls"}))]).await;
    assert_eq!(ran.ran.len(), 1);
    let warnings = logs.events("WARN").join("\n");
    assert!(warnings.contains("invalid peer certificate: UnknownIssuer"), "{warnings}");
}
