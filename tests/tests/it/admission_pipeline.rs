//! The admission pipeline (CONFORMANCE G13-G15): one ordered list of deciders decides every
//! tool call, arguments any decider rewrites are checked again against every permission rule
//! before the call runs, and each call's decision record is stored with it (memory, SQLite,
//! PostgreSQL). The settings hooks are small shell scripts written here.

#![cfg(unix)]

use crate::settings_hooks::Scratch;
use crate::support_tools;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use hooks_runtime::declarative::{PermissionRule, SettingsHooks, SettingsPermissions};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{MessageStore, SqliteStore, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{AdmissionRecord, Runtime, RuntimeBuilder, ThreadOptions};
use serde_json::{Value, json};
use support_tools::{lock, tool_message};

/// Where the deciders of the order test write their names, one line each (the settings hooks
/// are processes, so the log is a file they append to as well).
static ORDER_LOG: Mutex<Option<PathBuf>> = Mutex::new(None);

fn log_order(name: &str) {
    use std::io::Write as _;
    if let Some(path) = lock(&ORDER_LOG).as_ref() {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
        writeln!(file, "{name}").unwrap();
    }
}

#[hook(before_tool_call, id = "g13_guard", on_failure = deny)]
fn g13_guard(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    log_order("guard");
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g13_hook", on_failure = deny)]
fn g13_hook(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    log_order("before_tool_call");
    ToolDecision::allow()
}

/// Rewrites every command into one that `Bash(rm:*)` selects.
#[hook(before_tool_call, id = "g14_rewrite_to_rm", on_failure = deny)]
fn g14_rewrite_to_rm(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    arguments["command"] = json!("rm -rf /srv/data");
    ToolDecision::allow()
}

define_prompt! { name: g13_prompt, model: "scripted", prompt: "G13.", tools: ["Bash"], hooks: [g13_hook] }
define_agent! { name: g13_agent, side_a: { prompt: g13_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

define_prompt! { name: g14_prompt, model: "scripted", prompt: "G14.", tools: ["Bash"] }
define_agent! { name: g14_agent, side_a: { prompt: g14_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

define_prompt! { name: g14_rewrite_prompt, model: "scripted", prompt: "G14.", tools: ["Bash"], hooks: [g14_rewrite_to_rm] }
define_agent! { name: g14_rewrite_agent, side_a: { prompt: g14_rewrite_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

fn command(command: &str) -> Value {
    json!({"type": "command", "command": command, "timeout": 20})
}

type Calls = Arc<Mutex<Vec<Value>>>;

/// A `Bash`-like tool that records the arguments it ran with; with `asks`, its own rule asks for
/// approval (and logs its turn).
fn builder(model: ScriptedModel, calls: &Calls, asks: bool) -> RuntimeBuilder {
    let seen = calls.clone();
    let bash = FnTool::new("Bash", "Runs a shell command (records it).", move |arguments: Value| {
        let seen = seen.clone();
        async move {
            lock(&seen).push(arguments);
            HookToolResult::success("ran")
        }
    })
    .with_parameters(json!({
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    }))
    .with_approval(move |_| {
        if !asks {
            return ToolDecision::allow();
        }
        log_order("tool");
        ToolDecision::ask("the tool asks")
    });
    Runtime::builder().model("scripted", model).tool(bash)
}

fn bash(id: &str, command: &str) -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call(id, "Bash", &json!({"command": command}).to_string()),
        ScriptedResponse::text("done"),
    ]
}

fn rules(deny: &[&str], ask: &[&str], allow: &[&str]) -> SettingsPermissions {
    let parse = |list: &[&str]| list.iter().map(|text| PermissionRule::parse(text).unwrap()).collect::<Vec<_>>();
    let mut rules = SettingsPermissions::default();
    rules.deny = parse(deny);
    rules.ask = parse(ask);
    rules.allow = parse(allow);
    rules
}

/// A settings file whose `PreToolUse` hook for `Bash` prints `answer` (the hook's JSON output).
fn pre_tool_use_answering(answer: &Value, permissions: Value) -> SettingsHooks {
    let echo = format!("printf '%s' '{answer}'");
    let document = json!({
        "permissions": permissions,
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [command(&echo)]}]},
    });
    SettingsHooks::from_json_strict(&document.to_string()).expect("valid settings")
}

#[tokio::test]
async fn g13_every_decider_runs_once_in_the_documented_order() {
    let dir = Scratch::new("order");
    let log = dir.path("order.log");
    *lock(&ORDER_LOG) = Some(PathBuf::from(&log));
    let settings = SettingsHooks::from_json_strict(
        &json!({"hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [command(&format!("echo pre_tool_use >> '{log}'"))]}],
            "PermissionRequest": [{"matcher": "Bash", "hooks": [command(&format!("echo permission_request >> '{log}'"))]}],
        }})
        .to_string(),
    )
    .unwrap();
    let calls = Calls::default();
    let runtime = builder(ScriptedModel::new(bash("call_1", "ls")), &calls, true)
        .agent::<g13_agent>()
        .guard::<g13_guard>()
        .authorize_tools(|_state, _call| {
            log_order("authorizer");
            ToolDecision::allow()
        })
        .settings_hooks(settings)
        .build()
        .unwrap();
    let thread = runtime.create_thread("g13_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    *lock(&ORDER_LOG) = None;

    let order = std::fs::read_to_string(&log).unwrap();
    let order: Vec<&str> = order.lines().collect();
    assert_eq!(
        order,
        ["authorizer", "pre_tool_use", "guard", "before_tool_call", "tool", "permission_request"],
        "the deciders of one call, each once, in the pipeline's order"
    );
    // Nothing answered the ask: a person decides.
    assert_eq!(thread.status(), ThreadStatus::AwaitingApproval);
    assert!(lock(&calls).is_empty());
}

#[tokio::test]
async fn g14_updated_input_that_a_deny_rule_selects_is_denied() {
    let answer = json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": {"command": "rm -rf /srv/data"},
    }});
    let settings = pre_tool_use_answering(&answer, json!({"deny": ["Bash(rm:*)"]}));
    let calls = Calls::default();
    let runtime = builder(ScriptedModel::new(bash("call_1", "ls")), &calls, false)
        .agent::<g14_agent>()
        .settings_hooks(settings)
        .build()
        .unwrap();
    let thread = runtime.create_thread("g14_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    assert!(lock(&calls).is_empty(), "the rewritten command never ran: {:?}", lock(&calls));
    let result = tool_message(&thread, "call_1").await;
    let text = result.content.unwrap_or_default();
    assert!(text.contains("`settings:permissions.deny[0]`"), "{text}");
    assert_eq!(result.extra.get("tool_denied"), Some(&json!(true)));
}

#[tokio::test]
async fn g14_in_place_rewrite_that_a_code_rule_denies_is_denied() {
    let calls = Calls::default();
    let runtime = builder(ScriptedModel::new(bash("call_1", "ls")), &calls, false)
        .agent::<g14_rewrite_agent>()
        .permission_rules(rules(&["Bash(rm:*)"], &[], &["Bash"]))
        .build()
        .unwrap();
    let thread = runtime.create_thread("g14_rewrite_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    assert!(lock(&calls).is_empty(), "the rewritten command never ran: {:?}", lock(&calls));
    let text = tool_message(&thread, "call_1").await.content.unwrap_or_default();
    assert!(text.contains("`code:permissions.deny[0]`") && text.contains("Bash(rm:*)"), "{text}");
}

#[tokio::test]
async fn g14_an_allow_after_an_ask_does_not_lift_it() {
    // The rule asks; the PreToolUse hook after it allows: the call still waits for a person.
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}});
    let settings = pre_tool_use_answering(&answer, json!({"ask": ["Bash(git push:*)"]}));
    let calls = Calls::default();
    let runtime = builder(ScriptedModel::new(bash("call_1", "git push origin main")), &calls, false)
        .agent::<g14_agent>()
        .settings_hooks(settings)
        .build()
        .unwrap();
    let thread = runtime.create_thread("g14_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    assert_eq!(thread.status(), ThreadStatus::AwaitingApproval);
    assert!(lock(&calls).is_empty());
    let pending = thread.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    let asked: Vec<Option<&str>> = pending[0].reasons.iter().map(|reason| reason.hook.as_deref()).collect();
    assert_eq!(asked, [Some("settings:permissions.ask[0]")]);
}

// ---- G15: the decision record, stored with the call -------------------------------------------

/// Rewrites `ls` into `ls -la` in place.
#[hook(before_tool_call, id = "g15_long_listing", on_failure = deny)]
fn g15_long_listing(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    if arguments["command"] == "ls" {
        arguments["command"] = json!("ls -la");
    }
    ToolDecision::allow()
}

define_prompt! { name: g15_prompt, model: "scripted", prompt: "G15.", tools: ["Bash"], hooks: [g15_long_listing] }
define_agent! { name: g15_agent, side_a: { prompt: g15_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

/// The SHA-256 of `text` as `sha256sum` computes it.
fn sha256sum(text: &str) -> String {
    use std::io::Write as _;
    let mut child = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("sha256sum runs");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap().split_whitespace().next().unwrap().to_owned()
}

/// Each entry as (decider, by, decision, hash before, hash after).
fn entries(record: &AdmissionRecord) -> Vec<(&str, Option<&str>, &str, &str, &str)> {
    record
        .entries
        .iter()
        .map(|entry| {
            (
                entry.decider.as_str(),
                entry.by.as_deref(),
                entry.decision.as_str(),
                entry.arguments_before.as_str(),
                entry.arguments_after.as_str(),
            )
        })
        .collect()
}

fn g15_runtime(store: Arc<dyn MessageStore>, model: ScriptedModel, calls: &Calls) -> Runtime {
    builder(model, calls, false)
        .agent::<g15_agent>()
        .permission_rules(rules(&["Bash(rm:*)"], &["Bash(git push:*)"], &[]))
        .store(store)
        .build()
        .unwrap()
}

/// One step calls `ls` (rewritten by a hook, then run) and `git push` (a rule asks): both
/// records are read back from the store, the waiting one by a second runtime after a restart.
async fn g15_record_survives_in(store: impl Fn() -> Arc<dyn MessageStore>) {
    let calls = Calls::default();
    let model = ScriptedModel::new([ScriptedResponse::tool_call("call_ls", "Bash", r#"{"command":"ls"}"#)
        .then_tool_call("call_push", "Bash", r#"{"command":"git push"}"#)]);
    let thread_id = {
        let runtime = g15_runtime(store(), model, &calls);
        let thread = runtime.create_thread("g15_agent", ThreadOptions::default()).await.unwrap();
        assert_eq!(thread.send("go").await.unwrap().status, ThreadStatus::AwaitingApproval);
        thread.id().to_owned()
    };
    let ls = sha256sum(r#"{"command":"ls"}"#);
    let ls_la = sha256sum(r#"{"command":"ls -la"}"#);
    let push = sha256sum(r#"{"command":"git push"}"#);

    let runtime = g15_runtime(store(), ScriptedModel::new([ScriptedResponse::text("done")]), &calls);
    let thread = runtime.open_thread(&thread_id).await.unwrap();
    let pending = thread.pending_approvals().await.unwrap();
    let waiting = pending.iter().find(|call| call.id == "call_push").expect("call_push waits");
    let record = waiting.admission.as_ref().expect("the waiting call keeps its record");
    assert_eq!(
        entries(record),
        [
            ("schema", Some("schema"), "allow", push.as_str(), push.as_str()),
            ("permissions", Some("code:permissions.ask[0]"), "ask", push.as_str(), push.as_str()),
            ("before_tool_call", Some("g15_long_listing"), "allow", push.as_str(), push.as_str()),
        ]
    );
    assert_eq!(record.entries[1].rule.as_deref(), Some("Bash(git push:*)"));

    thread.approve("call_push").await.unwrap();
    let ran = tool_message(&thread, "call_ls").await;
    let record = AdmissionRecord::of_message(&ran).expect("the stored result carries its record");
    assert_eq!(
        entries(&record),
        [
            ("schema", Some("schema"), "allow", ls.as_str(), ls.as_str()),
            ("before_tool_call", Some("g15_long_listing"), "allow", ls.as_str(), ls_la.as_str()),
        ]
    );
    let approved = tool_message(&thread, "call_push").await;
    let record = AdmissionRecord::of_message(&approved).expect("the approved call's result carries its record");
    assert_eq!(record.entries[1].by.as_deref(), Some("code:permissions.ask[0]"));
    let ran: Vec<Value> = lock(&calls).clone();
    assert_eq!(ran, [json!({"command": "ls -la"}), json!({"command": "git push"})]);
}

#[tokio::test]
async fn g15_the_record_is_read_back_from_sqlite_after_a_restart() {
    let dir = Scratch::new("g15-sqlite");
    let db = dir.path("threads.db");
    g15_record_survives_in(|| Arc::new(SqliteStore::open(&db).unwrap()) as Arc<dyn MessageStore>).await;
}

#[tokio::test]
async fn g15_the_record_is_read_back_from_memory() {
    let store: Arc<dyn MessageStore> = Arc::new(hooks_runtime::store::InMemoryStore::new());
    g15_record_survives_in(|| store.clone()).await;
}

#[cfg(feature = "postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn g15_the_record_is_read_back_from_postgres_after_a_restart() {
    use hooks_runtime::store::{PostgresOptions, PostgresStore};
    let (url, schema) = crate::support_store::fresh_postgres_schema().await;
    let first = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    let second = PostgresStore::connect_with(&url, PostgresOptions::new().schema(&schema).max_connections(4))
        .await
        .unwrap_or_else(|error| panic!("{error}; start PostgreSQL or set HOOKS_DATABASE_URL"));
    let stores = Mutex::new(vec![Arc::new(second) as Arc<dyn MessageStore>, Arc::new(first) as Arc<dyn MessageStore>]);
    g15_record_survives_in(|| lock(&stores).pop().expect("two runtimes")).await;
}
