//! Governing tool calls, round two (G8, G9, G11, G12, the caps on reasons) on the in-memory
//! store: arguments edited on approval pass the guards again, the model's arguments are checked
//! against the tool's schema before any decider sees them, the authorizer and the tool decide
//! in the type hooks do, an interrupted call is marked so, and reasons handed in are capped.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::approvals::{ApprovalError, ApprovalState, MAX_REASON_BYTES, ToolCallChange};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::ThreadStatus;
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadEvent, ThreadOptions};
use serde_json::{Value, json};
use support::{Recorder, assert_requests_valid};

/// The arguments each guard or hook saw, per thread.
static SEEN: Recorder<String> = Recorder::new();

fn refund_tool(runs: &'static AtomicUsize) -> FnTool {
    FnTool::new("g8_refund", "Refunds an order.", move |arguments: Value| async move {
        runs.fetch_add(1, Ordering::SeqCst);
        HookToolResult::success(format!("refunded {}", arguments["amount"]))
    })
    .with_parameters(json!({
        "type": "object",
        "properties": {"amount": {"type": "number"}, "order": {"type": "string"}},
        "required": ["amount", "order"],
        "additionalProperties": false,
    }))
}

fn tool_results(messages: &[HookMessage]) -> Vec<String> {
    messages.iter().filter(|m| m.role == Role::Tool).map(|m| m.content.clone().unwrap_or_default()).collect()
}

// ---------------------------------------------------------------------------------------------
// G8: arguments edited on approval are governed again.

/// Denies refunds over 1000, asks for those over 100.
#[hook(before_tool_call, id = "g8_refund_limit", on_failure = deny)]
fn g8_refund_limit(state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    SEEN.record(&state.thread_id, format!("guard:{}", arguments["amount"]));
    match arguments["amount"].as_f64().unwrap_or(0.0) {
        amount if amount > 1000.0 => ToolDecision::deny("refunds over 1000 are refused"),
        amount if amount > 100.0 => ToolDecision::ask("refunds over 100 need a person"),
        _ => ToolDecision::allow(),
    }
}

/// A hook of the agent's prompt: no refunds of order `X-9`.
#[hook(before_tool_call, id = "g8_no_order_x9", on_failure = deny)]
fn g8_no_order_x9(state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    SEEN.record(&state.thread_id, format!("hook:{}", arguments["order"]));
    if arguments["order"] == "X-9" { ToolDecision::deny("order X-9 is under review") } else { ToolDecision::allow() }
}

define_prompt! { name: g8_prompt, model: "scripted", prompt: "Refunds.", tools: ["g8_refund"], hooks: [g8_no_order_x9] }
define_agent! { name: g8_agent, side_a: { prompt: g8_prompt, stop_on_response: true } }

fn g8_runtime(runs: &'static AtomicUsize) -> (Runtime, ScriptedModel) {
    let model = ScriptedModel::new(
        [
            vec![
                ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":250,"order":"A-1"}"#),
                ScriptedResponse::text("Done."),
            ],
            vec![
                ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":250,"order":"A-1"}"#),
                ScriptedResponse::text("Done."),
            ],
            vec![
                ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":250,"order":"A-1"}"#),
                ScriptedResponse::text("Done."),
            ],
        ]
        .concat(),
    );
    let runtime = Runtime::builder()
        .model("scripted", model.clone())
        .agent::<g8_agent>()
        .tool(refund_tool(runs))
        .guard::<g8_refund_limit>()
        .build()
        .unwrap();
    (runtime, model)
}

#[tokio::test(flavor = "current_thread")]
async fn g8_arguments_edited_on_approval_pass_the_guards_and_hooks_again() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (runtime, model) = g8_runtime(&RUNS);

    // A guard's deny of the edit denies the call; the decider is told why; the turn goes on.
    let thread = runtime.create_thread("g8_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("refund").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let denied = thread.approve_with("call_1", json!({"amount": 5000, "order": "A-1"})).await.unwrap_err();
    match &denied {
        ApprovalError::EditDenied { call, hook, reason } => {
            assert_eq!((call.as_str(), hook.as_str()), ("call_1", "g8_refund_limit"));
            assert_eq!(reason, "refunds over 1000 are refused");
        }
        other => panic!("expected EditDenied, got {other:?}"),
    }
    assert_eq!(RUNS.load(Ordering::SeqCst), 0, "the edited refund of 5000 never ran");
    assert_eq!(SEEN.of(thread.id()), ["guard:250", "hook:\"A-1\"", "guard:5000"], "the guard saw the edit");
    assert_eq!(thread.status(), ThreadStatus::Idle, "the turn went on after the denial");
    let results = tool_results(&thread.messages().await.unwrap());
    assert_eq!(
        results,
        ["the tool call was denied: the arguments edited on approval were denied by `g8_refund_limit`: \
          refunds over 1000 are refused"]
    );
    let again = thread.approve("call_1").await.unwrap_err();
    assert!(matches!(again, ApprovalError::UnknownCall { .. } | ApprovalError::AlreadyDecided { .. }), "{again}");

    // A hook of the agent's prompt sees the edit too.
    let thread = runtime.create_thread("g8_agent", ThreadOptions::default()).await.unwrap();
    thread.send("refund").await.unwrap();
    let denied = thread.approve_with("call_1", json!({"amount": 50, "order": "X-9"})).await.unwrap_err();
    assert!(matches!(&denied, ApprovalError::EditDenied { hook, .. } if hook == "g8_no_order_x9"), "{denied}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 0);

    // An ask of the edit is answered by this approval: the call runs, with the edit.
    let thread = runtime.create_thread("g8_agent", ThreadOptions::default()).await.unwrap();
    thread.send("refund").await.unwrap();
    let outcome = thread.approve_with("call_1", json!({"amount": 500, "order": "A-2"})).await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome}");
    assert_eq!(SEEN.of(thread.id()), ["guard:250", "hook:\"A-1\"", "guard:500", "hook:\"A-2\""]);
    assert_eq!(RUNS.load(Ordering::SeqCst), 1);
    assert_eq!(tool_results(&thread.messages().await.unwrap()), ["refunded 500"]);
    assert!(thread.pending_approvals().await.unwrap().is_empty(), "no second approval is asked for");
    assert_requests_valid(&model);
}

#[tokio::test(flavor = "current_thread")]
async fn g8_the_schema_check_applies_to_the_edit_before_the_guards() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (runtime, _model) = g8_runtime(&RUNS);
    let thread = runtime.create_thread("g8_agent", ThreadOptions::default()).await.unwrap();
    thread.send("refund").await.unwrap();
    let refused = thread.approve_with("call_1", json!({"amount": "lots", "order": "A-1"})).await.unwrap_err();
    assert!(matches!(refused, ApprovalError::InvalidArguments { .. }), "{refused}");
    assert!(refused.to_string().contains("/amount") && !refused.to_string().contains("lots"), "{refused}");
    assert_eq!(SEEN.of(thread.id()), ["guard:250", "hook:\"A-1\""], "no guard saw arguments the schema refuses");
    assert_eq!(thread.pending_approvals().await.unwrap()[0].state, ApprovalState::Pending, "nothing was decided");
}

// ---------------------------------------------------------------------------------------------
// G9: the model's arguments are checked against the schema before any decider.

#[hook(before_tool_call, id = "g9_watch", on_failure = deny)]
fn g9_watch(state: &ThreadState, _call: &HookToolCall, arguments: &mut Value) -> ToolDecision {
    SEEN.record(&state.thread_id, format!("guard:{arguments}"));
    ToolDecision::allow()
}

#[hook(tool_call_done, id = "g9_done_seen")]
fn g9_done_seen(state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) {
    SEEN.record(&state.thread_id, format!("done:{}", call.id));
}

#[hook(after_tool_call_failure, id = "g9_failure_seen")]
fn g9_failure_seen(state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    SEEN.record(&state.thread_id, format!("failure:{}", call.id));
    None
}

define_prompt! {
    name: g9_prompt, model: "scripted", prompt: "Refunds.", tools: ["g8_refund"], hooks: [g9_done_seen, g9_failure_seen],
}
define_agent! { name: g9_agent, side_a: { prompt: g9_prompt, stop_on_response: true } }

#[tokio::test(flavor = "current_thread")]
async fn g9_arguments_the_schema_refuses_reach_no_hook_or_tool_and_the_model_may_retry() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":"five-secret","order":"A-1"}"#),
        ScriptedResponse::tool_call("call_2", "g8_refund", r#"{"amount":5,"order":"A-1","extra":1}"#),
        ScriptedResponse::tool_call("call_3", "g8_refund", r#"{"amount":5,"order":"A-1"}"#),
        ScriptedResponse::text("Refunded."),
    ]);
    let authorized = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = authorized.clone();
    let runtime = Runtime::builder()
        .model("scripted", model.clone())
        .agent::<g9_agent>()
        .tool(refund_tool(&RUNS))
        .guard::<g9_watch>()
        .authorize_tools(move |_, _| {
            counted.fetch_add(1, Ordering::SeqCst);
            ToolDecision::allow()
        })
        .build()
        .unwrap();
    let thread = runtime.create_thread("g9_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("refund 5").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Refunded."), "{outcome}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 1, "only the valid call ran");
    assert_eq!(
        SEEN.of(thread.id()),
        [r#"guard:{"amount":5,"order":"A-1"}"#, "done:call_3"],
        "no decider and no tool hook ran for the invalid calls"
    );
    assert_eq!(authorized.load(Ordering::SeqCst), 1, "nor did authorize_tools see the invalid ones");
    let results = tool_results(&thread.messages().await.unwrap());
    assert!(results[0].contains("/amount") && results[0].contains("/properties/amount/type"), "{}", results[0]);
    assert!(!results[0].contains("five-secret"), "never the values: {}", results[0]);
    assert!(results[1].contains("additionalProperties"), "{}", results[1]);
    assert_eq!(results[2], "refunded 5");
    assert_requests_valid(&model);
    let second = &model.requests()[1];
    assert!(
        second.messages.iter().any(|m| m.tool_call_id.as_deref() == Some("call_1")),
        "the model reads the error in its next step and may call again"
    );
}

// ---------------------------------------------------------------------------------------------
// Caps on reasons handed in by hooks and people.

#[hook(before_tool_call, id = "caps_long_deny", on_failure = deny)]
fn caps_long_deny(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::deny("x".repeat(250 * 1024))
}

#[tokio::test(flavor = "current_thread")]
async fn caps_a_hooks_long_deny_reason_is_cut_to_the_limit_it_names() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":5,"order":"A-1"}"#),
        ScriptedResponse::text("Denied."),
    ]);
    let runtime = Runtime::builder()
        .model("scripted", model.clone())
        .agent::<g9_agent>()
        .tool(refund_tool(&RUNS))
        .guard::<caps_long_deny>()
        .build()
        .unwrap();
    let thread = runtime.create_thread("g9_agent", ThreadOptions::default()).await.unwrap();
    thread.send("refund").await.unwrap();
    let results = tool_results(&thread.messages().await.unwrap());
    assert!(results[0].len() < MAX_REASON_BYTES + 200, "stored: {} bytes", results[0].len());
    assert!(results[0].ends_with(&format!("the limit is {MAX_REASON_BYTES} bytes)")), "the limit is named");
    let sent = model.requests()[1].messages.iter().find(|m| m.role == "tool").unwrap().content.clone().unwrap();
    assert!(sent.len() < MAX_REASON_BYTES + 200, "sent to the model: {} bytes", sent.len());
}

#[tokio::test(flavor = "current_thread")]
async fn caps_a_persons_long_denial_is_refused_naming_the_limit() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (runtime, _model) = g8_runtime(&RUNS);
    let thread = runtime.create_thread("g8_agent", ThreadOptions::default()).await.unwrap();
    thread.send("refund").await.unwrap();
    let refused = thread.deny("call_1", &"y".repeat(MAX_REASON_BYTES + 1)).await.unwrap_err();
    assert!(matches!(refused, ApprovalError::ReasonTooLong { .. }), "{refused}");
    assert!(refused.to_string().contains(&format!("the limit is {MAX_REASON_BYTES} bytes")), "{refused}");
    assert_eq!(thread.pending_approvals().await.unwrap()[0].state, ApprovalState::Pending, "nothing was decided");
    thread.deny("call_1", &"y".repeat(MAX_REASON_BYTES)).await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// G11: `authorize_tools` and `Tool::requires_approval` answer with `ToolDecision`.

define_prompt! { name: g11_prompt, model: "scripted", prompt: "Refunds.", tools: ["g8_refund", "g11_wire"] }
define_agent! { name: g11_agent, side_a: { prompt: g11_prompt, stop_on_response: true } }

#[tokio::test(flavor = "current_thread")]
async fn g11_the_authorizer_and_the_tool_decide_with_reasons_in_one_type() {
    static REFUNDS: AtomicUsize = AtomicUsize::new(0);
    static WIRES: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":5,"order":"A-1"}"#)
            .then_tool_call("call_2", "g11_wire", r#"{"amount":50000}"#)
            .then_tool_call("call_3", "g11_wire", r#"{"amount":500}"#),
        ScriptedResponse::text("Done."),
    ]);
    let wire = FnTool::new("g11_wire", "Wires money.", |_args| async {
        WIRES.fetch_add(1, Ordering::SeqCst);
        HookToolResult::success("sent")
    })
    .with_approval(|arguments| match arguments["amount"].as_f64().unwrap_or(0.0) {
        amount if amount > 10_000.0 => ToolDecision::deny("wires over 10000 are done at a branch"),
        amount if amount > 100.0 => ToolDecision::ask("wires over 100 need a person"),
        _ => ToolDecision::allow(),
    });
    let runtime = Runtime::builder()
        .model("scripted", model.clone())
        .agent::<g11_agent>()
        .tool(refund_tool(&REFUNDS))
        .tool(wire)
        .authorize_tools(|_, call| {
            if call.name() == "g8_refund" {
                ToolDecision::ask("refunds are checked by a person")
            } else {
                ToolDecision::allow()
            }
        })
        .build()
        .unwrap();
    let thread = runtime.create_thread("g11_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("go").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let pending = thread.pending_approvals().await.unwrap();
    let asked: Vec<_> = pending
        .iter()
        .map(|call| (call.id.as_str(), call.reasons[0].hook.as_deref(), call.reasons[0].reason.as_str()))
        .collect();
    assert_eq!(
        asked,
        [
            ("call_1", Some("authorize_tools"), "refunds are checked by a person"),
            ("call_3", None, "wires over 100 need a person"),
        ]
    );
    thread.approve("call_1").await.unwrap();
    let outcome = thread.approve("call_3").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Done."), "{outcome}");
    assert_eq!((REFUNDS.load(Ordering::SeqCst), WIRES.load(Ordering::SeqCst)), (1, 1), "the denied wire never ran");
    let messages = thread.messages().await.unwrap();
    let denied = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_2")).unwrap();
    assert_eq!(
        denied.content.as_deref(),
        Some("the tool call was denied by `g11_wire`: wires over 10000 are done at a branch")
    );
    assert_eq!(denied.extra["tool_denied"], true);
    assert_requests_valid(&model);
}

// ---------------------------------------------------------------------------------------------
// G12: a call its process's death interrupted is marked so, apart from denials and failures.

#[tokio::test(flavor = "current_thread")]
async fn g12_a_call_left_running_is_marked_interrupted_in_the_result_and_the_event() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":500,"order":"A-1"}"#)
            .then_tool_call("call_2", "g8_refund", r#"{"amount":600,"order":"A-2"}"#)
            .then_tool_call("call_3", "g8_refund", r#"{"amount":2000,"order":"A-3"}"#),
        ScriptedResponse::text("Done."),
    ]);
    let runtime = Runtime::builder()
        .model("scripted", model.clone())
        .agent::<g9_agent>()
        .tool(refund_tool(&RUNS))
        .guard::<g8_refund_limit>()
        .build()
        .unwrap();
    let thread = runtime.create_thread("g9_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("refund").await.unwrap().status, ThreadStatus::AwaitingApproval);
    // What a process that died while running the approved call_1 leaves in the store.
    let store = runtime.store();
    let approved = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved);
    assert!(store.approvals().unwrap().advance_tool_call(thread.id(), &approved).await.unwrap());
    let running = ToolCallChange::new("call_1", ApprovalState::Approved, ApprovalState::Running);
    assert!(store.approvals().unwrap().advance_tool_call(thread.id(), &running).await.unwrap());
    let mut events = thread.subscribe();
    let outcome = thread.approve("call_2").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("Done."), "{outcome}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 1, "the interrupted call never runs again");

    let done: Vec<Value> = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|event| matches!(event, ThreadEvent::ToolCallDone { .. }))
        .map(|event| serde_json::to_value(&event).unwrap())
        .collect();
    let marks: Vec<_> =
        done.iter().map(|e| (e["id"].as_str().unwrap(), e.get("interrupted"), e.get("denied"))).collect();
    assert_eq!(marks, [("call_1", Some(&json!(true)), None), ("call_2", None, None),], "{done:#?}");
    let messages = thread.messages().await.unwrap();
    let marked: Vec<_> = messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| {
            let id = m.tool_call_id.clone().unwrap();
            (id, m.extra.get("tool_interrupted").cloned(), m.extra.get("tool_denied").cloned())
        })
        .collect();
    assert_eq!(
        marked,
        [
            ("call_1".to_owned(), Some(json!(true)), None),
            ("call_2".to_owned(), None, None),
            ("call_3".to_owned(), None, Some(json!(true))),
        ],
        "interrupted, run and denied, each told apart"
    );
    assert_requests_valid(&model);
}

// ---------------------------------------------------------------------------------------------
// A message a hook blocks: the reason it gave reaches the caller.

#[hook(before_create_message, id = "blocks_account_numbers")]
fn blocks_account_numbers(_state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    match message.content.as_deref() {
        Some(text) if text.contains("ACCT") => Err(HookError::block("account numbers are not sent to the model")),
        Some(text) if text.contains("BROKEN") => Err(HookError::new("SECRET detail of a failure")),
        _ => Ok(message),
    }
}

define_prompt! { name: blocked_prompt, model: "scripted", prompt: "Hi." }
define_agent! {
    name: blocked_agent,
    side_a: { prompt: blocked_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [blocks_account_numbers],
}

#[tokio::test(flavor = "current_thread")]
async fn blocked_a_blocked_messages_reason_reaches_the_outcome_and_a_failure_stays_in_the_logs() {
    let model = ScriptedModel::new([]);
    let runtime = Runtime::builder().model("scripted", model).agent::<blocked_agent>().build().unwrap();
    let thread = runtime.create_thread("blocked_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("pay ACCT 12-34").await.unwrap();
    assert!(outcome.is_failed(), "{outcome}");
    assert_eq!(outcome.blocked.as_deref(), Some("account numbers are not sent to the model"));
    assert!(outcome.to_string().contains("account numbers are not sent to the model"), "{outcome}");

    let outcome = thread.send("BROKEN").await.unwrap();
    assert!(outcome.is_failed(), "{outcome}");
    assert_eq!(outcome.blocked, None, "an ordinary failure gives no reason");
    assert!(!outcome.to_string().contains("SECRET"), "{outcome}");
}

// ---------------------------------------------------------------------------------------------
// A stop for repeated tool errors: every call of the stored message has its result, and no
// decider runs for a call that will not run.

#[hook(before_tool_call, id = "stop_watch", on_failure = deny)]
fn stop_watch(state: &ThreadState, call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    SEEN.record(&state.thread_id, format!("guard:{}", call.id));
    ToolDecision::allow()
}

#[tokio::test(flavor = "current_thread")]
async fn stop_after_repeated_tool_errors_answers_every_call_and_governs_none_it_will_not_run() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let failing = FnTool::new("stop_failing", "Always fails.", |_args| async {
        RUNS.fetch_add(1, Ordering::SeqCst);
        HookToolResult::error("the service is down")
    });
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "stop_failing", "{}")
            .then_tool_call("call_2", "stop_failing", "{}")
            .then_tool_call("call_3", "stop_failing", "{}")
            .then_tool_call("call_4", "stop_failing", "{}"),
        ScriptedResponse::text("Sorry."),
    ]);
    let runtime = Runtime::builder()
        .model("scripted", model.clone())
        .agent::<stop_agent>()
        .tool(failing)
        .guard::<stop_watch>()
        .repeated_tool_error_limit(3)
        .build()
        .unwrap();
    let thread = runtime.create_thread("stop_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    let outcome = thread.send("try").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(hooks_runtime::store::StopReason::RepeatedToolError), "{outcome}");
    assert_eq!(RUNS.load(Ordering::SeqCst), 3);
    assert_eq!(SEEN.of(thread.id()), ["guard:call_1", "guard:call_2", "guard:call_3"], "call_4 was never governed");
    let messages = thread.messages().await.unwrap();
    let roles: Vec<String> = messages
        .iter()
        .map(|m| match &m.tool_call_id {
            Some(id) => format!("tool({id})"),
            None => format!("{:?}", m.role).to_lowercase(),
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool(call_1)", "tool(call_2)", "tool(call_3)", "tool(call_4)", "user"]);
    let last = messages.iter().find(|m| m.tool_call_id.as_deref() == Some("call_4")).unwrap();
    assert!(last.content.as_deref().unwrap().contains("not run"), "{last:?}");
    let done = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|event| matches!(event, ThreadEvent::ToolCallDone { .. }))
        .count();
    assert_eq!(done, 4, "every call's tool_call_done");
    // The next turn's request is valid.
    thread.send("again").await.unwrap();
    assert_requests_valid(&model);
}

define_prompt! { name: stop_prompt, model: "scripted", prompt: "Try.", tools: ["stop_failing"] }
define_agent! {
    name: stop_agent,
    side_a: { prompt: stop_prompt, stop_on_response: true },
    side_b: { human: true },
}

// ---------------------------------------------------------------------------------------------
// G10: a governing hook run is a hook span (id, kind, source, duration) with its decision.

#[hook(before_tool_call, id = "g10_asks", on_failure = deny)]
fn g10_asks(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::ask("a person looks at every refund")
}

define_prompt! { name: g10_prompt, model: "scripted", prompt: "Refunds.", tools: ["g8_refund"], hooks: [g10_asks] }
define_agent! { name: g10_agent, side_a: { prompt: g10_prompt, stop_on_response: true } }

#[tokio::test(flavor = "current_thread")]
async fn g10_a_guard_and_a_before_tool_call_hook_are_hook_spans_with_their_decision() {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let (logs, _guard) = support::capture_logs_with_spans();
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "g8_refund", r#"{"amount":5,"order":"A-1"}"#)]);
    let runtime = Runtime::builder()
        .model("scripted", model)
        .agent::<g10_agent>()
        .tool(refund_tool(&RUNS))
        .guard::<g9_watch>()
        .build()
        .unwrap();
    let thread = runtime.create_thread("g10_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("refund").await.unwrap().status, ThreadStatus::AwaitingApproval);
    let closed = logs.lines_with("close");
    let spans: Vec<&String> = closed.iter().filter(|line| line.contains("hook.kind=\"before_tool_call\"")).collect();
    assert_eq!(spans.len(), 2, "{}", logs.contents());
    for (span, id, source, decision) in
        [(spans[0], "g9_watch", "runtime", "allow"), (spans[1], "g10_asks", "prompt:g10_prompt", "ask")]
    {
        assert!(span.contains(&format!("hook.id=\"{id}\"")), "{span}");
        assert!(span.contains(&format!("hook.source=\"{source}\"")), "{span}");
        assert!(span.contains(&format!("hook.decision=\"{decision}\"")), "{span}");
        assert!(span.contains("duration_us="), "{span}");
    }
}
