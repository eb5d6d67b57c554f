//! Governing tool calls (G2-G7) and approvals (A1, A3-A5) on the in-memory store: the gate's
//! order and combination, denials, schema-checked rewrites, failure policies, runtime-wide
//! guards over subagents, and parked steps that a decision resumes.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hooks_runtime::approvals::{ApprovalDecision, ApprovalError, ApprovalState, ToolCallChange};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::ThreadStatus;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, RuntimeBuilder, RuntimeError, ThreadEvent, ThreadOptions};
use serde_json::{Value, json};
use support::{Recorder, assert_requests_valid, capture_logs, shape};

/// What each hook saw, in order, per thread: `hook:argument-text`.
static SEEN: Recorder<String> = Recorder::new();

fn seen(state: &ThreadState, hook: &str, arguments: &Value) {
    SEEN.record(&state.thread_id, format!("{hook}:{arguments}"));
}

/// A tool that counts its runs and answers with the arguments it got.
fn counting_tool(name: &str, runs: &'static AtomicUsize) -> FnTool {
    FnTool::new(name, "Counts its runs.", move |arguments: Value| async move {
        runs.fetch_add(1, Ordering::SeqCst);
        HookToolResult::success(format!("ran with {arguments}"))
    })
}

fn one_call(tool: &str, arguments: &str) -> Vec<ScriptedResponse> {
    vec![ScriptedResponse::tool_call("call_1", tool, arguments), ScriptedResponse::text("Done.")]
}

fn builder(model: &ScriptedModel) -> RuntimeBuilder {
    Runtime::builder().model("scripted", model.clone())
}

fn tool_messages(messages: &[HookMessage]) -> Vec<&HookMessage> {
    messages.iter().filter(|message| message.role == Role::Tool).collect()
}

// ---------------------------------------------------------------------------------------------
// G2: order, after authorization, each hook on the previous one's arguments.

#[hook(before_tool_call, id = "g2_guard_marks", on_failure = deny)]
fn g2_guard_marks(state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    seen(state, "guard", arguments);
    arguments["guarded"] = json!(true);
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g2_first_rewrite", on_failure = deny)]
fn g2_first_rewrite(state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    seen(state, "first", arguments);
    arguments["n"] = json!(arguments["n"].as_i64().unwrap_or(0) + 1);
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g2_second_rewrite", on_failure = deny)]
async fn g2_second_rewrite(
    state: &ThreadState,
    _call: &HookToolCall,
    arguments: &mut Value,
    ctx: &HookExecutionContext,
) -> Result<ToolDecision, HookError> {
    seen(state, "second", arguments);
    assert!(matches!(ctx.source, HookSource::Prompt { .. }));
    arguments["n"] = json!(arguments["n"].as_i64().unwrap_or(0) * 10);
    Ok(ToolDecision::allow())
}

#[hook(tool_call_started, id = "g2_started")]
fn g2_started(state: &ThreadState, call: &HookToolCall, _progress: Option<&str>) {
    SEEN.record(&state.thread_id, format!("started:{}", call.function.arguments));
}

define_prompt! {
    name: g2_prompt, model: "scripted", prompt: "G2.", tools: ["g2_tool"],
    hooks: [g2_started, g2_first_rewrite, g2_second_rewrite],
}
define_agent! { name: g2_agent, side_a: { prompt: g2_prompt, stop_on_response: true } }

#[tokio::test]
async fn g2_guards_then_hooks_run_in_order_each_on_the_previous_arguments() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new(one_call("g2_tool", r#"{"n":1}"#));
    let runtime = builder(&model)
        .agent::<g2_agent>()
        .tool(counting_tool("g2_tool", &RUNS))
        .guard::<g2_guard_marks>()
        .build()
        .unwrap();
    let thread = runtime.create_thread("g2_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(
        SEEN.of(thread.id()),
        [
            // T2: as the call appears in the stream, before its arguments.
            "started:".to_owned(),
            r#"guard:{"n":1}"#.to_owned(),
            r#"first:{"guarded":true,"n":1}"#.to_owned(),
            r#"second:{"guarded":true,"n":2}"#.to_owned(),
        ],
        "the guard first, then the hooks in resolution order, each on the arguments the one before left"
    );
    assert_eq!(RUNS.load(Ordering::SeqCst), 1);
    let messages = thread.messages().await.unwrap();
    assert_eq!(
        tool_messages(&messages)[0].content.as_deref(),
        Some(r#"ran with {"guarded":true,"n":20}"#),
        "the tool runs with the rewritten arguments"
    );
}

#[tokio::test]
async fn g2_a_call_refused_by_authorize_tools_is_not_governed() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new(one_call("g2_tool", r#"{"n":1}"#));
    let runtime = builder(&model)
        .agent::<g2_agent>()
        .tool(counting_tool("g2_tool", &RUNS))
        .guard::<g2_guard_marks>()
        .authorize_tools(|_, _| ToolDecision::deny("not here"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("g2_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();
    let seen = SEEN.of(thread.id());
    assert!(seen.iter().all(|line| line.starts_with("started:")), "no governing hook ran: {seen:?}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// G3: a denial.

#[hook(before_tool_call, id = "g3_no_rm", on_failure = deny)]
fn g3_no_rm(_state: &ThreadState, call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    if call.name() == "g3_shell" && arguments["command"].as_str().unwrap_or_default().contains("rm -rf") {
        return ToolDecision::deny("destructive commands are not allowed");
    }
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g3_after_deny", on_failure = deny)]
fn g3_after_deny(state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    seen(state, "after_deny", arguments);
    ToolDecision::allow()
}

#[hook(after_tool_call_failure, id = "g3_failure_seen")]
fn g3_failure_seen(state: &ThreadState, call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    SEEN.record(&state.thread_id, format!("failure:{}:{}", call.id, result.error.clone().unwrap_or_default()));
    None
}

define_prompt! {
    name: g3_prompt, model: "scripted", prompt: "G3.", tools: ["g3_shell"],
    hooks: [g3_no_rm, g3_after_deny, g3_failure_seen],
}
define_agent! { name: g3_agent, side_a: { prompt: g3_prompt, stop_on_response: true } }

#[tokio::test]
async fn g3_denied_call_never_runs_and_is_recorded_as_a_denial() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new(one_call("g3_shell", r#"{"command":"rm -rf /"}"#));
    let runtime = builder(&model).agent::<g3_agent>().tool(counting_tool("g3_shell", &RUNS)).build().unwrap();
    let thread = runtime.create_thread("g3_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    let outcome = thread.send("clean up").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 0, "the tool never ran");
    let messages = thread.messages().await.unwrap();
    let result = tool_messages(&messages)[0];
    let reason = "the tool call was denied by `g3_no_rm`: destructive commands are not allowed";
    assert_eq!(result.content.as_deref(), Some(reason));
    assert_eq!(result.extra["tool_status"], "error");
    assert_eq!(result.extra["tool_denied"], true, "stored as a denial, not a tool failure");
    let seen = SEEN.of(thread.id());
    assert!(!seen.iter().any(|line| line.starts_with("after_deny")), "a Deny ends the chain: {seen:?}");
    assert_eq!(seen, [format!("failure:call_1:{reason}")], "the failure hooks run as for a failed call");
    let mut done = None;
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::ToolCallDone { denied, status, .. } = &event {
            done = Some((*status, *denied));
            assert_eq!(
                serde_json::to_value(&event).unwrap(),
                json!({"type": "tool_call_done", "id": "call_1", "name": "g3_shell", "status": "error", "denied": true})
            );
        }
    }
    assert_eq!(done, Some((ToolStatus::Error, true)));
    assert!(model.requests()[1].messages.iter().any(|m| m.content.as_deref() == Some(reason)), "the model reads it");
}

// ---------------------------------------------------------------------------------------------
// G4: deny > ask > allow.

#[hook(before_tool_call, id = "g4_ask", on_failure = deny)]
fn g4_ask(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::ask("a person should look")
}

#[hook(before_tool_call, id = "g4_allow", on_failure = deny)]
fn g4_allow(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g4_deny", on_failure = deny)]
fn g4_deny(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::deny("never")
}

define_prompt! { name: g4_ask_deny_prompt, model: "scripted", prompt: "G4.", tools: ["g4_tool"], hooks: [g4_ask, g4_deny] }
define_prompt! { name: g4_ask_allow_prompt, model: "scripted", prompt: "G4.", tools: ["g4_tool"], hooks: [g4_ask, g4_allow] }
define_agent! { name: g4_ask_deny_agent, side_a: { prompt: g4_ask_deny_prompt, stop_on_response: true } }
define_agent! { name: g4_ask_allow_agent, side_a: { prompt: g4_ask_allow_prompt, stop_on_response: true } }

#[tokio::test]
async fn g4_a_later_deny_overrides_an_ask_and_an_allow_never_does() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new([one_call("g4_tool", "{}"), one_call("g4_tool", "{}")].concat());
    let runtime = builder(&model)
        .agent::<g4_ask_deny_agent>()
        .agent::<g4_ask_allow_agent>()
        .tool(counting_tool("g4_tool", &RUNS))
        .build()
        .unwrap();
    let denied = runtime.create_thread("g4_ask_deny_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(denied.send("go").await.unwrap().status, ThreadStatus::Idle);
    assert!(denied.pending_approvals().await.unwrap().is_empty());
    let messages = denied.messages().await.unwrap();
    assert_eq!(tool_messages(&messages)[0].extra["tool_denied"], true);
    let asked = runtime.create_thread("g4_ask_allow_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(asked.send("go").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let pending = asked.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].reasons[0].hook.as_deref(), Some("g4_ask"));
    assert_eq!(RUNS.load(Ordering::SeqCst), 0);
}

// ---------------------------------------------------------------------------------------------
// G5: rewrites are checked against the tool's schema.

fn payment_tool(runs: &'static AtomicUsize) -> FnTool {
    counting_tool("g5_pay", runs).with_parameters(json!({
        "type": "object",
        "properties": {"amount": {"type": "number"}, "to": {"type": "string"}},
        "required": ["amount", "to"],
    }))
}

#[hook(before_tool_call, id = "g5_bad_rewrite", on_failure = deny)]
fn g5_bad_rewrite(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    arguments["amount"] = json!("secret-value-9431");
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g5_good_rewrite", on_failure = deny)]
fn g5_good_rewrite(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    arguments["amount"] = json!(1);
    ToolDecision::allow()
}

#[hook(before_tool_call, id = "g5_lenient_bad_rewrite", on_failure = allow)]
fn g5_lenient_bad_rewrite(_state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    arguments["to"] = json!(42);
    ToolDecision::allow()
}

define_prompt! { name: g5_strict_prompt, model: "scripted", prompt: "G5.", tools: ["g5_pay"], hooks: [g5_bad_rewrite] }
define_prompt! {
    name: g5_lenient_prompt, model: "scripted", prompt: "G5.", tools: ["g5_pay"],
    hooks: [g5_good_rewrite, g5_lenient_bad_rewrite],
}
define_agent! { name: g5_strict_agent, side_a: { prompt: g5_strict_prompt, stop_on_response: true } }
define_agent! { name: g5_lenient_agent, side_a: { prompt: g5_lenient_prompt, stop_on_response: true } }

#[tokio::test(flavor = "current_thread")]
async fn g5_a_rewrite_that_violates_the_schema_is_the_hooks_failure_logged_by_path() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (logs, _guard) = capture_logs();
    let arguments = r#"{"amount":5,"to":"bob"}"#;
    let model = ScriptedModel::new([one_call("g5_pay", arguments), one_call("g5_pay", arguments)].concat());
    let runtime = builder(&model)
        .agent::<g5_strict_agent>()
        .agent::<g5_lenient_agent>()
        .tool(payment_tool(&RUNS))
        .build()
        .unwrap();
    let strict = runtime.create_thread("g5_strict_agent", ThreadOptions::default()).await.unwrap();
    strict.send("pay").await.unwrap();
    assert_eq!(RUNS.load(Ordering::SeqCst), 0, "on_failure = deny: the call is denied");
    let messages = strict.messages().await.unwrap();
    assert_eq!(tool_messages(&messages)[0].extra["tool_denied"], true);
    let lines = logs.lines_with("g5_bad_rewrite");
    assert_eq!(lines.len(), 1, "{}", logs.contents());
    assert!(lines[0].contains("[Hooks] ✗"), "{}", lines[0]);
    assert!(lines[0].contains("/properties/amount/type"), "the schema path: {}", lines[0]);
    assert!(lines[0].contains("on_failure = deny"), "{}", lines[0]);
    assert!(!logs.contents().contains("secret-value-9431"), "never the values");

    let lenient = runtime.create_thread("g5_lenient_agent", ThreadOptions::default()).await.unwrap();
    lenient.send("pay").await.unwrap();
    assert_eq!(RUNS.load(Ordering::SeqCst), 1, "on_failure = allow: the call runs");
    let messages = lenient.messages().await.unwrap();
    assert_eq!(
        tool_messages(&messages)[0].content.as_deref(),
        Some(r#"ran with {"amount":1,"to":"bob"}"#),
        "the failed rewrite is undone, the good one before it kept"
    );
    assert!(logs.lines_with("g5_lenient_bad_rewrite")[0].contains("/properties/to/type"));
}

// ---------------------------------------------------------------------------------------------
// G6: failure, timeout and panic take the declared policy.

macro_rules! failing_guards {
    ($($name:ident $id:literal, $policy:ident, $how:ident;)*) => {$(
        #[hook(before_tool_call, id = $id, on_failure = $policy, timeout_ms = 50)]
        async fn $name(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> Result<ToolDecision, HookError> {
            failing_guards!(@fail $how)
        }
    )*};
    (@fail error) => { Err(HookError::new("the policy service is down")) };
    (@fail timeout) => {{ tokio::time::sleep(Duration::from_secs(5)).await; Ok(ToolDecision::allow()) }};
    (@fail panic) => { panic!("guard bug") };
}

failing_guards! {
    g6_error_deny "g6_error_deny", deny, error;
    g6_error_allow "g6_error_allow", allow, error;
    g6_timeout_deny "g6_timeout_deny", deny, timeout;
    g6_timeout_allow "g6_timeout_allow", allow, timeout;
    g6_panic_deny "g6_panic_deny", deny, panic;
    g6_panic_allow "g6_panic_allow", allow, panic;
}

define_prompt! { name: g6_prompt, model: "scripted", prompt: "G6.", tools: ["g6_tool"] }
define_agent! { name: g6_agent, side_a: { prompt: g6_prompt, stop_on_response: true } }

async fn g6_run(builder: RuntimeBuilder, runs: &'static AtomicUsize) -> (usize, Vec<HookMessage>) {
    let runtime = builder.agent::<g6_agent>().tool(counting_tool("g6_tool", runs)).build().unwrap();
    let thread = runtime.create_thread("g6_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    (runs.load(Ordering::SeqCst), thread.messages().await.unwrap())
}

// Paused time: the timed-out guards' 5 s sleeps and their 50 ms deadlines are timers of
// tokio's clock, which jumps to each deadline.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn g6_failing_timed_out_and_panicking_guards_take_their_on_failure() {
    let (logs, _guard) = capture_logs();
    static DENY_RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new(one_call("g6_tool", "{}"));
    let deny = builder(&model).guard::<g6_error_deny>();
    let (runs, messages) = g6_run(deny, &DENY_RUNS).await;
    assert_eq!(runs, 0, "error + deny blocks the call");
    assert!(tool_messages(&messages)[0].content.as_deref().unwrap().contains("could not decide (it failed)"));
    for (guard, word) in [("g6_timeout_deny", "timed out"), ("g6_panic_deny", "panicked")] {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let model = ScriptedModel::new(one_call("g6_tool", "{}"));
        let builder = match guard {
            "g6_timeout_deny" => builder(&model).guard::<g6_timeout_deny>(),
            _ => builder(&model).guard::<g6_panic_deny>(),
        };
        let (runs, messages) = g6_run(builder, &RUNS).await;
        assert_eq!(runs, 0, "{guard} blocks the call");
        assert!(tool_messages(&messages)[0].content.as_deref().unwrap().contains(word), "{guard}");
    }
    static ALLOW_RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new(one_call("g6_tool", "{}"));
    let allow = builder(&model).guard::<g6_error_allow>().guard::<g6_timeout_allow>().guard::<g6_panic_allow>();
    let (runs, messages) = g6_run(allow, &ALLOW_RUNS).await;
    assert_eq!(runs, 1, "with on_failure = allow each failure lets the call run");
    assert!(tool_messages(&messages)[0].extra.get("tool_denied").is_none());
    for (guard, consequence) in [
        ("g6_error_deny", "on_failure = deny: the tool call is denied"),
        ("g6_timeout_deny", "on_failure = deny: the tool call is denied"),
        ("g6_panic_deny", "on_failure = deny: the tool call is denied"),
        ("g6_error_allow", "on_failure = allow: the tool call goes on"),
        ("g6_timeout_allow", "on_failure = allow: the tool call goes on"),
        ("g6_panic_allow", "on_failure = allow: the tool call goes on"),
    ] {
        let lines = logs.lines_with(&format!("`{guard}`"));
        assert_eq!(lines.len(), 1, "{guard}: {}", logs.contents());
        assert!(lines[0].contains("[Hooks] ✗") && lines[0].contains(consequence), "{guard}: {}", lines[0]);
    }
    assert!(logs.lines_with("g6_error_deny")[0].contains("the policy service is down"));
    assert!(logs.lines_with("g6_timeout_deny")[0].contains("timed out after 50 ms"));
    assert!(logs.lines_with("g6_panic_deny")[0].contains("panicked at"));
}

// ---------------------------------------------------------------------------------------------
// G7: runtime-wide guards govern subagent threads too.

#[hook(before_tool_call, id = "g7_block_secret", on_failure = deny)]
fn g7_block_secret(_state: &ThreadState, call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    if call.name() == "g7_read_secret" { ToolDecision::deny("secrets stay put") } else { ToolDecision::allow() }
}

define_prompt! { name: g7_child_prompt, model: "child", prompt: "Child.", tools: ["g7_read_secret"] }
define_agent! { name: g7_child, side_a: { prompt: g7_child_prompt, stop_on_response: true } }
define_prompt! { name: g7_parent_prompt, model: "scripted", prompt: "Parent." }
define_agent! {
    name: g7_parent,
    side_a: { prompt: g7_parent_prompt, stop_on_response: true, subagents: [{ agent: g7_child }] },
}

#[tokio::test]
async fn g7_a_runtime_guard_governs_a_subagents_tool_calls() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let parent = ScriptedModel::new(one_call("g7_child", r#"{"message":"read it"}"#));
    let child = ScriptedModel::new(one_call("g7_read_secret", "{}"));
    let runtime = builder(&parent)
        .model("child", child.clone())
        .agent::<g7_parent>()
        .tool(counting_tool("g7_read_secret", &RUNS))
        .guard::<g7_block_secret>()
        .build()
        .unwrap();
    let thread = runtime.create_thread("g7_parent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 0, "the child's call was denied by the runtime guard");
    let denial = "the tool call was denied by `g7_block_secret`: secrets stay put";
    assert!(child.requests()[1].messages.iter().any(|m| m.content.as_deref() == Some(denial)));
}

// ---------------------------------------------------------------------------------------------
// A1, A3: a step with an allowed, an asked and a denied call.

#[hook(before_tool_call, id = "a1_policy", on_failure = deny)]
fn a1_policy(_state: &ThreadState, call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    match call.name() {
        "a1_pay" => ToolDecision::ask("payments need a person"),
        "a1_delete" => ToolDecision::deny("nothing is deleted"),
        _ => ToolDecision::allow(),
    }
}

define_prompt! {
    name: a1_prompt, model: "scripted", prompt: "A1.", tools: ["a1_lookup", "a1_pay", "a1_delete"], hooks: [a1_policy],
}
define_agent! { name: a1_agent, side_a: { prompt: a1_prompt, stop_on_response: true } }

fn three_calls() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_a", "a1_lookup", "{}")
            .then_tool_call("call_b", "a1_pay", r#"{"amount":500}"#)
            .then_tool_call("call_c", "a1_delete", "{}"),
        ScriptedResponse::text("All settled."),
    ]
}

struct A1 {
    runtime: Runtime,
    model: ScriptedModel,
}

fn a1_runtime(lookups: &'static AtomicUsize, payments: &'static AtomicUsize) -> A1 {
    let model = ScriptedModel::new(three_calls());
    let runtime = builder(&model)
        .agent::<a1_agent>()
        .tool(counting_tool("a1_lookup", lookups))
        .tool(counting_tool("a1_pay", payments))
        .tool(counting_tool("a1_delete", payments))
        .build()
        .unwrap();
    A1 { runtime, model }
}

#[tokio::test]
async fn a1_a_call_that_asks_waits_while_the_others_run() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, model } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    let outcome = thread.send("settle").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::AwaitingApproval, "{outcome}");
    assert_eq!(thread.status(), ThreadStatus::AwaitingApproval);
    assert_eq!(LOOKUPS.load(Ordering::SeqCst), 1, "the allowed call ran at once");
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 0, "neither the asked nor the denied call ran");
    assert_eq!(model.requests().len(), 1, "no model request while a call waits");
    let pending = thread.pending_approvals().await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!((pending[0].id.as_str(), pending[0].tool.as_str()), ("call_b", "a1_pay"));
    assert_eq!(pending[0].arguments, json!({"amount": 500}));
    assert_eq!(pending[0].reasons[0].hook.as_deref(), Some("a1_policy"));
    assert_eq!(pending[0].reasons[0].reason, "payments need a person");
    assert!(pending[0].requested_at > 0);
    assert_eq!(pending[0].state, ApprovalState::Pending);
    let messages = thread.messages().await.unwrap();
    let stored: Vec<_> = tool_messages(&messages).iter().map(|m| m.tool_call_id.clone().unwrap()).collect();
    assert_eq!(stored, ["call_a"], "results after the waiting call wait too, to keep the call order");
    let mut requested = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ThreadEvent::ApprovalRequested { .. } = &event {
            requested.push(serde_json::to_value(&event).unwrap());
        }
    }
    assert_eq!(
        requested,
        [json!({"type": "approval_requested", "id": "call_b", "name": "a1_pay",
                "reasons": [{"hook": "a1_policy", "reason": "payments need a person"}]})]
    );
}

#[tokio::test]
async fn a3_approving_runs_the_call_once_and_the_next_request_is_valid_and_in_call_order() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, model } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let mut events = thread.subscribe();
    let outcome = thread.approve("call_b").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(outcome.reply.as_deref(), Some("All settled."));
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 1, "the approved call ran once, the denied one never");
    assert_eq!(LOOKUPS.load(Ordering::SeqCst), 1, "the allowed call did not run again");
    assert_requests_valid(&model);
    assert_eq!(
        shape(&model.requests()[1]),
        ["system", "user", "assistant(calls: call_a,call_b,call_c)", "tool(call_a)", "tool(call_b)", "tool(call_c)"]
    );
    let resolved: Vec<_> = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|event| matches!(event, ThreadEvent::ApprovalResolved { .. }))
        .collect();
    assert_eq!(resolved, [ThreadEvent::ApprovalResolved { id: "call_b".into(), decision: ApprovalDecision::Approved }]);
    assert!(thread.pending_approvals().await.unwrap().is_empty());
}

#[tokio::test]
async fn a3_denying_gives_the_model_the_reason_and_the_turn_goes_on() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, model } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let outcome = thread.deny("call_b", "over budget").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 0);
    assert_requests_valid(&model);
    let request = &model.requests()[1];
    let denial = request.messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_b")).unwrap();
    assert_eq!(denial.content.as_deref(), Some("the tool call was denied: over budget"));
}

#[tokio::test]
async fn a3_edited_arguments_are_checked_against_the_schema() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new(one_call("g5_pay", r#"{"amount":5,"to":"bob"}"#));
    let runtime = builder(&model)
        .agent::<a3_edit_agent>()
        .tool(payment_tool(&RUNS).with_approval(|_| ToolDecision::ask("payments need a person")))
        .build()
        .unwrap();
    let thread = runtime.create_thread("a3_edit_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("pay").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let pending = thread.pending_approvals().await.unwrap();
    assert_eq!(pending[0].reasons[0].hook, None, "the tool itself asked");
    let refused = thread.approve_with("call_1", json!({"amount": "lots", "to": "bob"})).await.unwrap_err();
    assert!(matches!(refused, ApprovalError::InvalidArguments { .. }), "{refused}");
    assert!(refused.to_string().contains("/amount"), "{refused}");
    assert!(!refused.to_string().contains("lots"), "never the values: {refused}");
    let outcome = thread.approve_with("call_1", json!({"amount": 2, "to": "bob"})).await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    let messages = thread.messages().await.unwrap();
    assert_eq!(tool_messages(&messages)[0].content.as_deref(), Some(r#"ran with {"amount":2,"to":"bob"}"#));
}

define_prompt! { name: a3_edit_prompt, model: "scripted", prompt: "A3.", tools: ["g5_pay"] }
define_agent! { name: a3_edit_agent, side_a: { prompt: a3_edit_prompt, stop_on_response: true } }

// ---------------------------------------------------------------------------------------------
// A4, A5.

#[tokio::test]
async fn a4_a_second_decision_on_a_call_is_refused() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, .. } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let other_handle = runtime.open_thread(thread.id()).await.unwrap();
    thread.approve("call_b").await.unwrap();
    let again = other_handle.deny("call_b", "too late").await.unwrap_err();
    assert!(matches!(again, ApprovalError::UnknownCall { .. } | ApprovalError::AlreadyDecided { .. }), "{again}");
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 1);
    let unknown = thread.approve("call_zzz").await.unwrap_err();
    assert!(unknown.to_string().contains("call_zzz"), "{unknown}");
}

#[tokio::test]
async fn a4_two_concurrent_decisions_one_wins_and_the_tool_runs_once() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, .. } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let other = runtime.open_thread(thread.id()).await.unwrap();
    let (first, second) = tokio::join!(thread.approve("call_b"), other.approve("call_b"));
    let wins = [first.is_ok(), second.is_ok()].iter().filter(|ok| **ok).count();
    assert_eq!(wins, 1, "{first:?} / {second:?}");
    let loser = if first.is_ok() { second } else { first }.unwrap_err();
    assert!(matches!(loser, ApprovalError::AlreadyDecided { .. } | ApprovalError::UnknownCall { .. }), "{loser}");
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a4_the_decision_is_one_conditional_write_in_the_store() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, .. } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let store = runtime.store();
    let approve = ToolCallChange::new("call_b", ApprovalState::Pending, ApprovalState::Approved);
    let deny = ToolCallChange::new("call_b", ApprovalState::Pending, ApprovalState::Denied).with_reason("no");
    assert!(store.approvals().unwrap().advance_tool_call(thread.id(), &approve).await.unwrap());
    assert!(
        !store.approvals().unwrap().advance_tool_call(thread.id(), &deny).await.unwrap(),
        "a second decider finds the call decided, and writes nothing"
    );
    let parked = store.approvals().unwrap().parked_tool_calls(thread.id()).await.unwrap();
    let call = parked.iter().find(|call| call.id == "call_b").unwrap();
    assert_eq!((call.state, call.decision_reason.as_deref()), (ApprovalState::Approved, None));
    let refused = thread.deny("call_b", "no").await.unwrap_err();
    assert_eq!(refused, ApprovalError::AlreadyDecided { call: "call_b".into(), state: ApprovalState::Approved });
    assert!(refused.to_string().contains("already decided"), "{refused}");
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a5_a_message_sent_while_calls_wait_is_refused_and_not_stored() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, .. } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let before = thread.messages().await.unwrap().len();
    let refused = thread.send("hello?").await.unwrap_err();
    assert_eq!(refused, RuntimeError::AwaitingApproval { calls: vec!["call_b".into()] });
    assert!(refused.to_string().contains("`call_b`"), "{refused}");
    assert_eq!(thread.messages().await.unwrap().len(), before, "nothing stored");
    assert_eq!(thread.status(), ThreadStatus::AwaitingApproval);
}

#[tokio::test]
async fn a5_abort_denies_every_waiting_call() {
    static LOOKUPS: AtomicUsize = AtomicUsize::new(0);
    static PAYMENTS: AtomicUsize = AtomicUsize::new(0);
    let A1 { runtime, model } = a1_runtime(&LOOKUPS, &PAYMENTS);
    let thread = runtime.create_thread("a1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("settle").await.unwrap();
    let mut events = thread.subscribe();
    thread.abort();
    let status = loop {
        match events.recv().await.unwrap() {
            ThreadEvent::Status { status } if status != ThreadStatus::Running => break status,
            _ => {}
        }
    };
    assert_eq!(status, ThreadStatus::Stopped("aborted".into()));
    assert_eq!(PAYMENTS.load(Ordering::SeqCst), 0);
    assert!(thread.pending_approvals().await.unwrap().is_empty());
    let messages = thread.messages().await.unwrap();
    let ids: Vec<_> = tool_messages(&messages).iter().map(|m| m.tool_call_id.clone().unwrap()).collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"], "every call is paired with its result, in order");
    assert_eq!(tool_messages(&messages)[1].extra["tool_denied"], true);
    assert_eq!(model.requests().len(), 1, "an aborted run asks the model nothing more");
    // The thread takes messages again.
    model.push_all([ScriptedResponse::text("Hi.")]);
    assert_eq!(thread.send("hello").await.unwrap().status, ThreadStatus::Idle);
    assert_requests_valid(&model);
}
