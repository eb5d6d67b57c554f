//! Hooks of a Claude Code-format settings file on a real runtime (CONFORMANCE K3, K5): every
//! stdin field, and each event at its point — PreToolUse denying, asking (an approval of A,
//! combined with the gate's decision, kept across a restart) and rewriting tool calls (checked
//! against the tool's schema, G5),
//! PostToolUse / PostToolUseFailure adding to the result, UserPromptSubmit blocking or adding
//! context, SessionStart adding context, Stop / SubagentStop continuing a turn — for every
//! agent, subagent threads included. The hooks are small scripts written here.

#![cfg(unix)]

use crate::support;
use crate::support_tools;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use hooks_runtime::approvals::ApprovalReason;
use hooks_runtime::declarative::{SessionEndReason, SettingsHooks};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, MessageStore, SqliteStore, StopReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{RunError, Runtime, RuntimeBuilder, Thread, ThreadEvent, ThreadOptions};
use serde_json::{Value, json};
use support::{assert_requests_valid, shape};
use support_tools::{lock, tool_message};

define_prompt! { name: k_prompt, model: "scripted", prompt: "K.", tools: ["Bash", "Fail"] }
define_prompt! { name: k_parent_prompt, model: "scripted", prompt: "Parent.", tools: [] }

define_agent! {
    name: k_agent,
    side_a: { prompt: k_prompt, stop_on_response: true, max_steps: 6 },
    side_b: { human: true },
}

define_agent! {
    name: k_child,
    expose_as_tool: true,
    tool_description: "A helper with a shell.",
    side_a: { prompt: k_prompt, stop_on_response: true, max_steps: 6 },
    side_b: { human: true },
}

define_agent! {
    name: k_parent,
    side_a: { prompt: k_parent_prompt, stop_on_response: true, max_steps: 6, subagents: [{ agent: k_child }] },
    side_b: { human: true },
}

/// A directory for the scripts and what they record, removed afterwards (the admission suite
/// uses it too).
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "settings-hooks-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }

    /// Writes an executable script; its path, for a `command`.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The JSON documents a recording hook appended to `name`, one per line.
    fn recorded(&self, name: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.path(name)).unwrap_or_default();
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A hook command that appends its stdin, one line, to `file`.
fn recorder(file: &str) -> String {
    format!("cat >> '{file}'; echo >> '{file}'")
}

fn settings(hooks: Value) -> SettingsHooks {
    SettingsHooks::from_json_strict(&json!({ "hooks": hooks }).to_string()).expect("valid settings")
}

fn command(command: &str) -> Value {
    json!({"type": "command", "command": command, "timeout": 20})
}

type Calls = Arc<Mutex<Vec<Value>>>;

/// A `Bash`-like tool that only records the arguments it was called with (its schema: a
/// `command` string, an integer `timeout`); and `Fail`, which fails.
fn runtime(model: ScriptedModel, hooks: SettingsHooks, calls: &Calls) -> Runtime {
    builder(model, hooks, calls).build().unwrap()
}

fn builder(model: ScriptedModel, hooks: SettingsHooks, calls: &Calls) -> RuntimeBuilder {
    let seen = calls.clone();
    let bash = FnTool::new("Bash", "Runs a shell command (records it).", move |arguments: Value| {
        let seen = seen.clone();
        async move {
            let command = arguments["command"].as_str().unwrap_or_default().to_owned();
            lock(&seen).push(arguments);
            HookToolResult::success(json!({"stdout": format!("ran {command}"), "exit_code": 0}).to_string())
        }
    })
    .with_parameters(json!({
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    }));
    let fail = FnTool::new("Fail", "Always fails.", |_| async { HookToolResult::error("disk full") });
    Runtime::builder()
        .agent::<k_agent>()
        .agent::<k_parent>()
        .model("scripted", model)
        .tool(bash)
        .tool(fail)
        .settings_hooks(hooks)
}

async fn thread(runtime: &Runtime, agent: &str) -> Thread {
    runtime.create_thread(agent, ThreadOptions::default()).await.unwrap()
}

fn bash(id: &str, command: &str) -> ScriptedResponse {
    ScriptedResponse::tool_call(id, "Bash", &json!({"command": command}).to_string())
}

// ---- K3: every stdin field ----------------------------------------------------------------

#[tokio::test]
async fn k3_every_stdin_field_reaches_the_script_as_json_data() {
    let dir = Scratch::new("stdin");
    let events = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "SessionStart", "Stop"];
    let mut hooks = serde_json::Map::new();
    for event in events {
        hooks.insert(event.into(), json!([{"hooks": [command(&recorder(&dir.path(event)))]}]));
    }
    // Shell syntax in a value stays data: the hooks read it from stdin, nothing splices it.
    let hostile = format!("$(touch {0}) `touch {0}` '; touch {0}; '", dir.path("pwned"));
    let model = ScriptedModel::new([
        bash("call_1", &hostile).then_tool_call("call_2", "Fail", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let calls = Calls::default();
    let runtime = runtime(model, settings(Value::Object(hooks)), &calls);
    let thread = thread(&runtime, "k_agent").await;
    let outcome = thread.send("hello $(id)").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");

    let cwd = std::env::current_dir().unwrap().to_str().unwrap().to_owned();
    // Every event names the thread's transcript (K7); the rest is compared whole.
    let recorded = |event: &str| -> Vec<Value> {
        let mut inputs = dir.recorded(event);
        for input in &mut inputs {
            let path = input.as_object_mut().unwrap().remove("transcript_path").expect("transcript_path");
            assert!(path.as_str().unwrap().ends_with(".jsonl"), "{path}");
        }
        inputs
    };
    let base = |event: &str| json!({"session_id": thread.id(), "hook_event_name": event, "cwd": cwd, "permission_mode": "default"});
    let with = |mut value: Value, fields: Value| {
        value.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        value
    };
    assert_eq!(recorded("SessionStart"), [with(base("SessionStart"), json!({"source": "startup"}))]);
    assert_eq!(recorded("UserPromptSubmit"), [with(base("UserPromptSubmit"), json!({"prompt": "hello $(id)"}))]);
    let pre = recorded("PreToolUse");
    assert_eq!(
        pre[0],
        with(
            base("PreToolUse"),
            json!({"tool_name": "Bash", "tool_input": {"command": hostile}, "tool_use_id": "call_1"})
        )
    );
    assert_eq!(
        pre[1],
        with(base("PreToolUse"), json!({"tool_name": "Fail", "tool_input": {}, "tool_use_id": "call_2"}))
    );
    assert_eq!(
        recorded("PostToolUse"),
        [with(
            base("PostToolUse"),
            json!({"tool_name": "Bash", "tool_input": {"command": hostile}, "tool_use_id": "call_1",
                   "tool_response": {"stdout": format!("ran {hostile}"), "exit_code": 0}})
        )]
    );
    assert_eq!(
        recorded("PostToolUseFailure"),
        [with(
            base("PostToolUseFailure"),
            json!({"tool_name": "Fail", "tool_input": {}, "tool_use_id": "call_2", "error": "disk full", "is_interrupt": false})
        )]
    );
    assert_eq!(
        recorded("Stop"),
        [with(base("Stop"), json!({"stop_hook_active": false, "last_assistant_message": "done"}))]
    );
    assert!(!std::path::Path::new(&dir.path("pwned")).exists(), "a value ran as shell text");
}

// ---- K5: PreToolUse --------------------------------------------------------------------------

/// The example's kind of guard, in python: deny `rm -rf`, ask for `git push --force`, rewrite
/// `ls` to `ls -la`.
const GUARD: &str = r#"#!/usr/bin/env python3
import json, sys
call = json.load(sys.stdin)
command = call["tool_input"].get("command", "")
def answer(**specific):
    print(json.dumps({"hookSpecificOutput": dict(hookEventName="PreToolUse", **specific)}))
if "rm -rf" in command:
    answer(permissionDecision="deny", permissionDecisionReason="rm -rf is not allowed")
elif "push --force" in command:
    answer(permissionDecision="ask", permissionDecisionReason="force push: a person decides",
           additionalContext="the remote keeps the old head as backup/main")
elif command == "ls":
    answer(permissionDecision="allow", updatedInput={"command": "ls -la"})
elif command == "echo hi":
    answer(permissionDecision="allow", additionalContext="checked by the guard")
"#;

/// The id the guard of a one-group file decides under.
const GUARD_ID: &str = "settings:hooks.PreToolUse[0].hooks[0]";

fn guarded(guard: &str) -> SettingsHooks {
    settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [command(guard)]}]}))
}

/// The commands the `Bash` tool ran, in order.
fn commands(calls: &Calls) -> Vec<String> {
    lock(calls).iter().map(|arguments| arguments["command"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test]
async fn k5_pre_tool_use_denies_and_rewrites_at_the_tool_path() {
    let dir = Scratch::new("guard");
    let guard = dir.script("guard.py", GUARD);
    let model = ScriptedModel::new([
        bash("call_rm", "rm -rf ~"),
        bash("call_ls", "ls"),
        bash("call_ok", "echo hi"),
        ScriptedResponse::text("done"),
    ]);
    let calls = Calls::default();
    let runtime = runtime(model, guarded(&guard), &calls);
    let thread = thread(&runtime, "k_agent").await;
    thread.send("go").await.unwrap();

    assert_eq!(*lock(&calls), [json!({"command": "ls -la"}), json!({"command": "echo hi"})], "only allowed calls ran");
    let denied = tool_message(&thread, "call_rm").await;
    assert_eq!(denied.extra_str("tool_status"), Some("error"));
    assert_eq!(denied.extra["tool_denied"], true, "a denial (G3), not a tool failure");
    assert_eq!(
        denied.content.as_deref(),
        Some("the tool call was denied by `settings:hooks.PreToolUse[0].hooks[0]`: rm -rf is not allowed")
    );
    assert_eq!(
        tool_message(&thread, "call_ls").await.content.as_deref(),
        Some(r#"{"exit_code":0,"stdout":"ran ls -la"}"#)
    );
    assert_eq!(
        tool_message(&thread, "call_ok").await.content.as_deref(),
        Some("{\"exit_code\":0,\"stdout\":\"ran echo hi\"}\n\nchecked by the guard"),
        "a PreToolUse additionalContext reaches the result the model reads"
    );
}

// ---- K5 with A: an ask is an approval ------------------------------------------------------------

/// One step: a call the guard lets run, the force push it asks for, and a call after it.
fn push_step() -> ScriptedResponse {
    bash("call_status", "git status")
        .then_tool_call("call_push", "Bash", &json!({"command": "git push --force"}).to_string())
        .then_tool_call("call_log", "Bash", &json!({"command": "git log"}).to_string())
}

/// The reason the guard's ask is parked with, carrying its context for the model.
fn push_reason() -> ApprovalReason {
    ApprovalReason::new(Some(GUARD_ID), "force push: a person decides")
        .with_context("the remote keeps the old head as backup/main")
}

#[tokio::test]
async fn k5_a_pre_tool_use_ask_parks_the_call_and_approving_runs_it_once() {
    let dir = Scratch::new("ask");
    let guard = dir.script("guard.py", GUARD);
    let model = ScriptedModel::new([push_step(), ScriptedResponse::text("pushed")]);
    let calls = Calls::default();
    let runtime = runtime(model.clone(), guarded(&guard), &calls);
    let thread = thread(&runtime, "k_agent").await;
    let mut events = thread.subscribe();
    let outcome = thread.send("publish").await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::AwaitingApproval, "{outcome:?}");
    assert_eq!(commands(&calls), ["git status", "git log"], "the other calls ran; the asked one waits");
    assert_eq!(model.requests().len(), 1, "no model request while a call waits");
    let pending = thread.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].id.as_str(), pending[0].tool.as_str()), ("call_push", "Bash"));
    assert_eq!(pending[0].arguments, json!({"command": "git push --force"}));
    assert_eq!(pending[0].reasons, [push_reason()]);
    let requested: Vec<ThreadEvent> = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|event| matches!(event, ThreadEvent::ApprovalRequested { .. }))
        .collect();
    assert_eq!(
        requested,
        [ThreadEvent::ApprovalRequested { id: "call_push".into(), name: "Bash".into(), reasons: vec![push_reason()] }]
    );

    let outcome = thread.approve("call_push").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_eq!(outcome.reply.as_deref(), Some("pushed"));
    assert_eq!(commands(&calls), ["git status", "git log", "git push --force"], "the approved call ran once");
    assert_requests_valid(&model);
    assert_eq!(
        shape(&model.requests()[1]),
        [
            "system",
            "user",
            "assistant(calls: call_status,call_push,call_log)",
            "tool(call_status)",
            "tool(call_push)",
            "tool(call_log)"
        ],
        "results in the model's call order, each call paired before the next request"
    );
    assert_eq!(
        tool_message(&thread, "call_push").await.content.as_deref(),
        Some("{\"exit_code\":0,\"stdout\":\"ran git push --force\"}\n\nthe remote keeps the old head as backup/main"),
        "the ask's additionalContext reaches the approved call's result"
    );
    assert!(thread.pending_approvals().await.unwrap().is_empty());
}

#[tokio::test]
async fn k5_a_denied_pre_tool_use_ask_gives_the_model_the_reason_and_never_runs() {
    let dir = Scratch::new("ask-denied");
    let guard = dir.script("guard.py", GUARD);
    let model = ScriptedModel::new([push_step(), ScriptedResponse::text("not pushed")]);
    let calls = Calls::default();
    let runtime = runtime(model.clone(), guarded(&guard), &calls);
    let thread = thread(&runtime, "k_agent").await;
    assert_eq!(thread.send("publish").await.unwrap().status, ThreadStatus::AwaitingApproval);

    let outcome = thread.deny("call_push", "not on a Friday").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_eq!(outcome.reply.as_deref(), Some("not pushed"));
    assert_eq!(commands(&calls), ["git status", "git log"], "the denied call never ran");
    assert_requests_valid(&model);
    let request = &model.requests()[1];
    let denial = request.messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_push")).unwrap();
    assert_eq!(denial.content.as_deref(), Some("the tool call was denied: not on a Friday"));
    assert_eq!(tool_message(&thread, "call_push").await.extra["tool_denied"], true);
}

#[tokio::test]
async fn k5_a_pre_tool_use_ask_survives_a_restart_on_sqlite() {
    let dir = Scratch::new("ask-restart");
    let guard = dir.script("guard.py", GUARD);
    let db = dir.path("threads.db");
    let first_calls = Calls::default();
    let thread_id = {
        let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
        let model = ScriptedModel::new([bash("call_push", "git push --force")]);
        let runtime = builder(model, guarded(&guard), &first_calls).store(store).build().unwrap();
        let thread = thread(&runtime, "k_agent").await;
        assert_eq!(thread.send("publish").await.unwrap().status, ThreadStatus::AwaitingApproval);
        thread.id().to_owned()
    };
    let calls = Calls::default();
    let store: Arc<dyn MessageStore> = Arc::new(SqliteStore::open(&db).unwrap());
    let model = ScriptedModel::new([ScriptedResponse::text("pushed")]);
    let runtime = builder(model.clone(), guarded(&guard), &calls).store(store).build().unwrap();
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    assert_eq!(thread.status(), ThreadStatus::AwaitingApproval);
    let pending = thread.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].reasons, [push_reason()], "the reason, its hook and its context were stored");

    let outcome = thread.approve("call_push").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert!(lock(&first_calls).is_empty());
    assert_eq!(commands(&calls), ["git push --force"]);
    assert_requests_valid(&model);
    assert_eq!(
        tool_message(&thread, "call_push").await.content.as_deref(),
        Some("{\"exit_code\":0,\"stdout\":\"ran git push --force\"}\n\nthe remote keeps the old head as backup/main")
    );
}

#[hook(before_tool_call, id = "k5_gate", on_failure = deny)]
fn k5_gate(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    let command = arguments["command"].as_str().unwrap_or_default();
    if command.contains("--delete") {
        ToolDecision::deny("branches are not deleted")
    } else if command.ends_with(" main") {
        ToolDecision::ask("main is protected")
    } else {
        ToolDecision::allow()
    }
}

#[tokio::test]
async fn k5_a_pre_tool_use_ask_combines_with_the_gate_deny_over_ask_over_allow() {
    let dir = Scratch::new("ask-gate");
    let guard = dir.script("guard.py", GUARD);
    let model = ScriptedModel::new([
        bash("call_feature", "git push --force origin feature")
            .then_tool_call("call_main", "Bash", &json!({"command": "git push --force origin main"}).to_string())
            .then_tool_call("call_delete", "Bash", &json!({"command": "git push --force --delete old"}).to_string())
            .then_tool_call("call_rm", "Bash", &json!({"command": "rm -rf main"}).to_string()),
        ScriptedResponse::text("done"),
    ]);
    let calls = Calls::default();
    let runtime = builder(model.clone(), guarded(&guard), &calls).guard::<k5_gate>().build().unwrap();
    let thread = thread(&runtime, "k_agent").await;
    assert_eq!(thread.send("publish").await.unwrap().status, ThreadStatus::AwaitingApproval);

    let pending = thread.pending_approvals().await.unwrap();
    let reasons: Vec<(&str, Vec<Option<&str>>)> = pending
        .iter()
        .map(|call| (call.id.as_str(), call.reasons.iter().map(|reason| reason.hook.as_deref()).collect()))
        .collect();
    assert_eq!(
        reasons,
        [("call_feature", vec![Some(GUARD_ID)]), ("call_main", vec![Some(GUARD_ID), Some("k5_gate")])],
        "an ask of the settings hook alone, and both asks as one approval"
    );
    thread.approve("call_feature").await.unwrap();
    let outcome = thread.deny("call_main", "not main").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_eq!(commands(&calls), ["git push --force origin feature"]);
    assert_requests_valid(&model);
    assert_eq!(
        tool_message(&thread, "call_delete").await.content.as_deref(),
        Some("the tool call was denied by `k5_gate`: branches are not deleted"),
        "a gate deny wins over the settings hook's ask"
    );
    assert_eq!(
        tool_message(&thread, "call_rm").await.content.as_deref(),
        Some("the tool call was denied by `settings:hooks.PreToolUse[0].hooks[0]`: rm -rf is not allowed"),
        "a settings deny ends it before the gate, whose ask for `main` never comes"
    );
}

// ---- K5 with G5: updatedInput through the tool's schema ------------------------------------------

/// Rewrites by mode: `open` gives `accept` a valid timeout and `bad-open` one of the wrong type;
/// `closed` gives `bad-closed` one of the wrong type. `updatedInput` replaces the input, so it
/// is the whole input with the timeout added.
const REWRITER: &str = r#"#!/usr/bin/env python3
import json, sys
mode, tool_input = sys.argv[1], json.load(sys.stdin)["tool_input"]
update = {("open", "accept"): {"timeout": 30},
          ("open", "bad-open"): {"timeout": "secret-value-4242"},
          ("closed", "bad-closed"): {"timeout": "secret-value-4242"}}.get((mode, tool_input["command"]))
if update is not None:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                                             "updatedInput": dict(tool_input, **update)}}))
"#;

#[tokio::test]
async fn k5_an_updated_input_must_satisfy_the_tools_schema() {
    let dir = Scratch::new("schema");
    let rewriter = dir.script("rewriter.py", REWRITER);
    let hooks = settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        command(&format!("{rewriter} open")),
        {"type": "command", "command": format!("{rewriter} closed"), "onFailure": "block"}
    ]}]}));
    let model = ScriptedModel::new([
        bash("call_accept", "accept")
            .then_tool_call("call_open", "Bash", &json!({"command": "bad-open"}).to_string())
            .then_tool_call("call_closed", "Bash", &json!({"command": "bad-closed"}).to_string()),
        ScriptedResponse::text("done"),
    ]);
    let calls = Calls::default();
    let runtime = runtime(model, hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    assert_eq!(thread.send("go").await.unwrap().status, ThreadStatus::Idle);

    assert_eq!(
        *lock(&calls),
        [json!({"command": "accept", "timeout": 30}), json!({"command": "bad-open"})],
        "a rewrite the schema accepts applies; a rejected one of a hook that fails open leaves the arguments"
    );
    let closed = tool_message(&thread, "call_closed").await;
    assert_eq!(closed.extra["tool_denied"], true, "a rejected rewrite of a hook that fails closed denies");
    let content = closed.content.unwrap();
    assert!(content.starts_with("the tool call was denied by `settings:hooks.PreToolUse[0].hooks[1]`: "), "{content}");
    assert!(content.contains("/properties/timeout/type"), "the schema path: {content}");
    assert!(!content.contains("secret-value"), "never the values: {content}");
}

#[tokio::test]
async fn k5_pre_tool_use_exit_2_denies_with_stderr_and_a_fail_closed_crash_denies() {
    let dir = Scratch::new("exit2");
    let model = ScriptedModel::new([bash("call_1", "make"), ScriptedResponse::text("done")]);
    let calls = Calls::default();
    let hooks = settings(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        command("echo 'builds are frozen' >&2; exit 2"),
        {"type": "command", "command": dir.path("missing-guard.sh"), "onFailure": "block"}
    ]}]}));
    let runtime = runtime(model, hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    thread.send("go").await.unwrap();
    assert!(lock(&calls).is_empty());
    let content = tool_message(&thread, "call_1").await.content.unwrap();
    assert!(
        content.starts_with("the tool call was denied by `settings:hooks.PreToolUse[0].hooks[0]`: builds are frozen; "),
        "{content}"
    );
    assert!(content.contains("a hook that fails closed failed: exited with code 127"), "{content}");
}

#[tokio::test]
async fn k5_a_crashing_pre_tool_use_hook_fails_open_and_non_matching_tools_are_not_guarded() {
    let model = ScriptedModel::new([
        bash("call_1", "make").then_tool_call("call_2", "Fail", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let calls = Calls::default();
    let hooks = settings(json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [command("kill -SEGV $$")]},
        {"matcher": "Edit|Write", "hooks": [command("exit 2")]}
    ]}));
    let runtime = runtime(model, hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    thread.send("go").await.unwrap();
    assert_eq!(*lock(&calls), [json!({"command": "make"})]);
    assert_eq!(tool_message(&thread, "call_2").await.content.as_deref(), Some("disk full"));
}

// ---- K5: PostToolUse / PostToolUseFailure ------------------------------------------------------

#[tokio::test]
async fn k5_post_tool_use_adds_context_and_block_reasons_to_the_result_the_model_reads() {
    let model = ScriptedModel::new([
        bash("call_1", "make").then_tool_call("call_2", "Fail", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let calls = Calls::default();
    let hooks = settings(json!({
        "PostToolUse": [{"matcher": "Bash", "hooks": [
            command(r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: 2 warnings"}}'"#),
            command(r#"echo '{"decision": "block", "reason": "the build left files behind"}'"#)
        ]}],
        "PostToolUseFailure": [{"hooks": [command(r#"echo '{"hookSpecificOutput": {"additionalContext": "try a smaller file"}}'"#)]}]
    }));
    let runtime = runtime(model, hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    thread.send("go").await.unwrap();
    let ok = tool_message(&thread, "call_1").await;
    assert_eq!(
        ok.content.as_deref(),
        Some("{\"exit_code\":0,\"stdout\":\"ran make\"}\n\nA hook says: the build left files behind\nlint: 2 warnings")
    );
    let failed = tool_message(&thread, "call_2").await;
    assert_eq!(failed.content.as_deref(), Some("disk full\n\ntry a smaller file"));
    assert_eq!(failed.extra_str("tool_status"), Some("error"));
}

// ---- K5: UserPromptSubmit, SessionStart --------------------------------------------------------

#[tokio::test]
async fn k5_user_prompt_submit_blocks_a_message_before_it_is_stored() {
    let model = ScriptedModel::new([ScriptedResponse::text("never")]);
    let calls = Calls::default();
    let hooks = settings(json!({"UserPromptSubmit": [{"hooks": [
        command("grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0")
    ]}]}));
    let runtime = runtime(model.clone(), hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    let outcome = thread.send("my password is hunter2").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert_eq!(
        outcome.error.as_ref().map(RunError::message),
        Some("a UserPromptSubmit hook blocked the message: no secrets in prompts")
    );
    assert!(thread.messages().await.unwrap().is_empty(), "nothing stored");
    assert!(model.requests().is_empty(), "no turn");

    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("never"), "a message the hook lets through runs");
}

#[tokio::test]
async fn k5_user_prompt_submit_and_session_start_context_reach_the_model() {
    let model = ScriptedModel::new([ScriptedResponse::text("ok")]);
    let calls = Calls::default();
    let hooks = settings(json!({
        "SessionStart": [{"matcher": "startup", "hooks": [command("echo 'branch: main'")]}],
        "UserPromptSubmit": [{"hooks": [command(r#"echo '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "today is Tuesday"}}'"#)]}]
    }));
    let runtime = runtime(model.clone(), hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    thread.send("what day is it?").await.unwrap();
    let stored: Vec<(Option<String>, Option<String>)> = thread
        .messages()
        .await
        .unwrap()
        .iter()
        .map(|m| (m.content.clone(), m.extra_str("settings_hook").map(str::to_owned)))
        .collect();
    assert_eq!(
        stored[..3],
        [
            (Some("branch: main".into()), Some("SessionStart".into())),
            (Some("what day is it?".into()), None),
            (Some("today is Tuesday".into()), Some("UserPromptSubmit".into())),
        ]
    );
    let sent: Vec<String> = model.requests()[0].messages.iter().filter_map(|m| m.content.clone()).collect();
    assert_eq!(sent[1..], ["branch: main", "what day is it?", "today is Tuesday"]);
}

// ---- K5: Stop ----------------------------------------------------------------------------------

/// Blocks the first stop of a turn, then lets it end (as the format's scripts do, by
/// `stop_hook_active`).
const STOP_ONCE: &str = r#"#!/usr/bin/env python3
import json, sys
event = json.load(sys.stdin)
if not event["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests before you finish"}))
"#;

#[tokio::test]
async fn k5_a_stop_hook_continues_the_turn_once_with_its_reason() {
    let dir = Scratch::new("stop");
    let stop = dir.script("stop.py", STOP_ONCE);
    let model = ScriptedModel::new([ScriptedResponse::text("first"), ScriptedResponse::text("tests pass")]);
    let calls = Calls::default();
    let runtime = runtime(model.clone(), settings(json!({"Stop": [{"hooks": [command(&stop)]}]})), &calls);
    let thread = thread(&runtime, "k_agent").await;
    let outcome = thread.send("fix it").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("tests pass"));
    assert_eq!(model.requests().len(), 2);
    let last = model.requests()[1].messages.last().unwrap().clone();
    assert_eq!((&*last.role, last.content.as_deref()), ("user", Some("run the tests before you finish")));
}

#[tokio::test]
async fn k5_a_stop_hook_that_always_blocks_is_bounded_by_max_steps() {
    let model = ScriptedModel::new((0..6).map(|_| ScriptedResponse::text("again")));
    let calls = Calls::default();
    let hooks = settings(json!({"Stop": [{"hooks": [command(r#"echo '{"decision": "block", "reason": "more"}'"#)]}]}));
    let runtime = runtime(model.clone(), hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::MaxSteps));
    assert_eq!(model.requests().len(), 6);
}

// ---- K5: runtime-wide, subagent threads included ---------------------------------------------------

#[tokio::test]
async fn k5_settings_hooks_govern_subagent_threads_and_fire_subagent_stop_there() {
    let dir = Scratch::new("subagent");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_child", "k_child", r#"{"message": "clean up"}"#),
        bash("call_rm", "rm -rf /"),
        ScriptedResponse::text("child done"),
        ScriptedResponse::text("parent done"),
    ]);
    let calls = Calls::default();
    let hooks = settings(json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [command("grep -q 'rm -rf' && { echo 'not in any thread' >&2; exit 2; }; exit 0")]}],
        "SubagentStop": [{"hooks": [command(&recorder(&dir.path("subagent_stop")))]}],
        "Stop": [{"hooks": [command(&recorder(&dir.path("stop")))]}],
        "SessionStart": [{"hooks": [command(&recorder(&dir.path("session_start")))]}]
    }));
    let runtime = runtime(model, hooks, &calls);
    let parent = thread(&runtime, "k_parent").await;
    let outcome = parent.send("go").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("parent done"), "{outcome:?}");
    assert!(lock(&calls).is_empty(), "the child's rm -rf was denied");

    let subagent_stop = dir.recorded("subagent_stop");
    assert_eq!(subagent_stop.len(), 1);
    assert_eq!(subagent_stop[0]["hook_event_name"], "SubagentStop");
    assert_ne!(subagent_stop[0]["session_id"], parent.id(), "the child's thread");
    let stop = dir.recorded("stop");
    assert_eq!((stop.len(), stop[0]["session_id"].as_str()), (1, Some(parent.id())));
    assert_eq!(dir.recorded("session_start").len(), 1, "SessionStart for the top-level thread only");
}

#[tokio::test]
async fn k11_subagent_start_fires_for_a_child_thread_and_its_context_reaches_the_child() {
    let dir = Scratch::new("subagent-start");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_child", "k_child", r#"{"message": "clean up"}"#),
        ScriptedResponse::text("child done"),
        ScriptedResponse::text("parent done"),
    ]);
    let context =
        r#"{"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "Child-context-K11"}}"#;
    let hooks = settings(json!({
        "SubagentStart": [{"hooks": [command(&format!("{}; printf '%s' '{context}'", recorder(&dir.path("start"))))]}]
    }));
    let runtime = runtime(model.clone(), hooks, &Calls::default());
    let parent = thread(&runtime, "k_parent").await;
    assert_eq!(parent.send("go").await.unwrap().reply.as_deref(), Some("parent done"));
    let start = dir.recorded("start");
    assert_eq!(start.len(), 1, "once, for the child only");
    assert_eq!(start[0]["hook_event_name"], "SubagentStart");
    assert_eq!(start[0]["agent_type"], "k_child");
    assert_ne!(start[0]["session_id"], parent.id());
    let child_request = format!("{:?}", model.requests()[1]);
    assert!(child_request.contains("Child-context-K11"), "{child_request}");
}

#[tokio::test]
async fn k11_session_end_is_the_top_level_threads_and_a_subagents_child_has_none() {
    let dir = Scratch::new("session-end-child");
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_child", "k_child", r#"{"message": "clean up"}"#),
        ScriptedResponse::text("child done"),
        ScriptedResponse::text("parent done"),
    ]);
    let hooks = settings(json!({
        "SubagentStart": [{"hooks": [command(&recorder(&dir.path("start")))]}],
        "SessionEnd": [{"hooks": [command(&recorder(&dir.path("end")))]}]
    }));
    let runtime = runtime(model, hooks, &Calls::default());
    let parent = thread(&runtime, "k_parent").await;
    parent.send("go").await.unwrap();
    let child = dir.recorded("start")[0]["session_id"].as_str().unwrap().to_owned();
    // Opening the child thread begins no session: it has its parent's.
    runtime.open_thread(&child).await.unwrap();
    assert!(!runtime.end_session(&child, SessionEndReason::Other).await);
    assert_eq!(runtime.end_sessions(SessionEndReason::Logout).await, 1);
    let ends = dir.recorded("end");
    assert_eq!(ends.len(), 1);
    assert_eq!((ends[0]["session_id"].as_str(), ends[0]["reason"].as_str()), (Some(parent.id()), Some("logout")));
}

// ---- Abort ------------------------------------------------------------------------------------

#[tokio::test]
async fn k3_an_abort_does_not_wait_for_a_running_hook_and_kills_it() {
    let dir = Scratch::new("abort");
    let (started, finished) = (dir.path("started"), dir.path("finished"));
    let sleep = format!("{}.{}", 400, std::process::id());
    let hooks = settings(json!({"PreToolUse": [{"hooks": [
        {"type": "command", "command": format!("touch '{started}'; sleep {sleep}; touch '{finished}'"), "timeout": 600}
    ]}]}));
    let model = ScriptedModel::new([bash("call_1", "make"), ScriptedResponse::text("never")]);
    let calls = Calls::default();
    let runtime = runtime(model, hooks, &calls);
    let thread = thread(&runtime, "k_agent").await;
    let aborter = {
        let thread = thread.clone();
        let started = started.clone();
        tokio::spawn(async move {
            while !std::path::Path::new(&started).exists() {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            thread.abort();
        })
    };
    // A run that waited for the hook would take its 400 s: the guard fails the test long before.
    let outcome = tokio::time::timeout(std::time::Duration::from_secs(60), thread.send("go"))
        .await
        .expect("the run waited for the hook")
        .unwrap();
    aborter.await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    assert!(lock(&calls).is_empty());
    let alive = || {
        std::fs::read_dir("/proc").into_iter().flatten().filter_map(Result::ok).any(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|cmdline| cmdline.split(|b| *b == 0).any(|a| a == sleep.as_bytes()))
        })
    };
    // An outside process, which nothing can await: polled, with a generous deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alive() {
        assert!(std::time::Instant::now() < deadline, "the hook's sleep outlived the abort");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // Killed, not run to its end: the command's last step never ran.
    assert!(!std::path::Path::new(&finished).exists(), "the hook ran to its end");
}
