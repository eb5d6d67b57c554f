//! Errors and limits (CONFORMANCE E1-E5) against the real runtime: failing transforms keep the
//! last good value, failing event hooks change nothing, timeouts, panics, and logs that name the
//! hook but never the data.
//!
//! Logs are captured with a thread-local `tracing` subscriber on the current-thread runtime of
//! `#[tokio::test]`, so every task of the test logs into its own buffer.

use crate::support_tools;

use std::sync::Mutex;
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use support_tools::{LogCapture, lock, tool_message};

fn last_user_content(messages: &[LlmMessage]) -> Option<String> {
    messages.iter().rev().find(|message| message.role == "user").and_then(|message| message.content.clone())
}

// ---------------------------------------------------------------------------------------------
// E1: a failing transform is logged and the chain goes on with the last good value.

static E1_SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[hook(filter_messages, id = "e1_mark")]
fn e1_mark(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    for message in &mut messages {
        if message.role == Role::User {
            message.content = message.content.take().map(|content| format!("marked: {content}"));
        }
    }
    messages
}

#[hook(filter_messages, id = "e1_filter_fails")]
fn e1_filter_fails(_state: &ThreadState, messages: Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
    drop(messages);
    Err(HookError::new("e1 filter failure"))
}

#[hook(filter_messages, id = "e1_filter_after")]
fn e1_filter_after(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let users: Vec<String> = messages.iter().filter_map(|message| message.content.clone()).collect();
    lock(&E1_SEEN).push(format!("filter_after:{}", users.join("|")));
    messages
}

#[hook(after_system_message, id = "e1_system_replace")]
fn e1_system_replace(_state: &ThreadState, system: &str) -> Option<String> {
    Some(format!("{system} +replaced"))
}

#[hook(after_system_message, id = "e1_system_fails")]
async fn e1_system_fails(_state: &ThreadState, _system: &str) -> Result<Option<String>, HookError> {
    Err(HookError::new("e1 system failure"))
}

#[hook(after_system_message, id = "e1_system_after")]
fn e1_system_after(_state: &ThreadState, system: &str) -> Option<String> {
    lock(&E1_SEEN).push(format!("system_after:{system}"));
    None
}

define_prompt! {
    name: e1_prompt,
    model: "scripted",
    prompt: "E1 system.",
    hooks: [e1_system_replace, e1_system_fails, e1_system_after, e1_mark, e1_filter_fails, e1_filter_after],
}

define_agent! {
    name: e1_agent,
    side_a: { prompt: e1_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn e1_failing_transform_is_logged_and_the_chain_keeps_the_last_good_value() {
    let logs = LogCapture::start();
    let model = ScriptedModel::new([ScriptedResponse::text("answer")]);
    let runtime = Runtime::builder().agent::<e1_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("e1_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("answer"));

    assert_eq!(
        *lock(&E1_SEEN),
        ["system_after:E1 system. +replaced", "filter_after:marked: hello"],
        "the hook after a failing one gets the value of the hook before it"
    );
    let request = &model.requests()[0];
    assert_eq!(request.messages[0].content.as_deref(), Some("E1 system. +replaced"));
    assert_eq!(last_user_content(&request.messages).as_deref(), Some("marked: hello"));

    let failures = logs.failure_lines();
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(failures.iter().any(|line| line.contains("after_system_message") && line.contains("e1_system_fails")));
    assert!(failures.iter().any(|line| line.contains("filter_messages") && line.contains("e1_filter_fails")));
    // Stored history is untouched by the filter.
    let stored = thread.messages().await.unwrap();
    assert_eq!(stored[0].content.as_deref(), Some("hello"));
}

// ---------------------------------------------------------------------------------------------
// E2: a failing or panicking event hook never affects the operation it observes.

static E2_SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[hook(after_create_message, id = "e2_created_fails")]
async fn e2_created_fails(_state: &ThreadState, _message: &MessageRecord) -> Result<(), HookError> {
    Err(HookError::new("e2 failure"))
}

#[hook(after_create_message, id = "e2_created_panics")]
fn e2_created_panics(_state: &ThreadState, _message: &MessageRecord) {
    panic!("e2_created_panics fails on purpose");
}

#[hook(after_create_message, id = "e2_created_after")]
fn e2_created_after(_state: &ThreadState, message: &MessageRecord) {
    lock(&E2_SEEN).push(format!("created:{}", message.role.as_str()));
}

#[hook(tool_call_done, id = "e2_done_panics")]
async fn e2_done_panics(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {
    tokio::task::yield_now().await;
    panic!("e2_done_panics fails on purpose");
}

#[hook(tool_call_done, id = "e2_done_fails")]
fn e2_done_fails(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) -> Result<(), HookError> {
    Err(HookError::new("e2 failure"))
}

#[hook(tool_call_done, id = "e2_done_after")]
fn e2_done_after(_state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    lock(&E2_SEEN).push(format!("done:{}:{}", call.id, result.result.clone().unwrap_or_default()));
}

define_prompt! {
    name: e2_prompt,
    model: "scripted",
    prompt: "E2.",
    tools: ["e2_tool"],
    hooks: [e2_created_fails, e2_created_panics, e2_created_after, e2_done_panics, e2_done_fails, e2_done_after],
}

define_agent! {
    name: e2_agent,
    side_a: { prompt: e2_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn e2_failing_event_hooks_never_affect_the_operation() {
    let logs = LogCapture::start();
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_e2", "e2_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = Runtime::builder()
        .agent::<e2_agent>()
        .model("scripted", model)
        .tool(FnTool::new("e2_tool", "Works.", |_| async { HookToolResult::success("tool output") }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e2_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("done"));

    let stored = thread.messages().await.unwrap();
    let roles: Vec<&str> = stored.iter().map(|message| message.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "every message is stored");
    assert_eq!(tool_message(&thread, "call_e2").await.content.as_deref(), Some("tool output"));
    assert_eq!(
        *lock(&E2_SEEN),
        ["created:user", "created:assistant", "done:call_e2:tool output", "created:tool", "created:assistant",],
        "the hooks after the failing ones still ran, with the operation's own values"
    );
    // Two failing after_create_message hooks per message (4 messages), two tool_call_done.
    assert_eq!(logs.failure_lines().len(), 4 * 2 + 2, "{:#?}", logs.failure_lines());
}

// ---------------------------------------------------------------------------------------------
// E3: every hook runs under a timeout; past it, it is a failed hook of its kind.

static E3_SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[hook(filter_messages, id = "e3_slow_filter", timeout_ms = 50)]
async fn e3_slow_filter(_state: &ThreadState, _messages: Vec<HookMessage>) -> Vec<HookMessage> {
    tokio::time::sleep(Duration::from_secs(10)).await;
    Vec::new()
}

#[hook(filter_messages, id = "e3_filter_after")]
fn e3_filter_after(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    lock(&E3_SEEN).push(format!("filter_after:{}", messages.len()));
    messages
}

/// No `timeout_ms`: the runtime-wide `hook_timeout` applies.
#[hook(after_system_message, id = "e3_slow_system")]
async fn e3_slow_system(_state: &ThreadState, _system: &str) -> Option<String> {
    tokio::time::sleep(Duration::from_secs(10)).await;
    Some("too late".to_owned())
}

#[hook(after_create_message, id = "e3_slow_observer", timeout_ms = 30)]
async fn e3_slow_observer(_state: &ThreadState, _message: &MessageRecord) {
    tokio::time::sleep(Duration::from_secs(10)).await;
}

define_prompt! {
    name: e3_prompt,
    model: "scripted",
    prompt: "E3 system.",
    hooks: [e3_slow_system, e3_slow_filter, e3_filter_after, e3_slow_observer],
}

define_agent! {
    name: e3_agent,
    side_a: { prompt: e3_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

// Paused time: the hooks' 10 s sleeps and their deadlines are timers of tokio's clock, which
// jumps from one to the next. A hook not cut off would apply its value (`too late`, an empty
// history), which the assertions below see.
#[tokio::test(start_paused = true)]
async fn e3_hooks_past_their_timeout_are_cut_off_and_treated_as_failed() {
    let logs = LogCapture::start();
    let model = ScriptedModel::new([ScriptedResponse::text("in time")]);
    let runtime = Runtime::builder()
        .agent::<e3_agent>()
        .model("scripted", model.clone())
        .hook_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e3_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("in time"));

    // The timed-out hooks' values never applied: the last good value went on.
    assert_eq!(*lock(&E3_SEEN), ["filter_after:1"]);
    let request = &model.requests()[0];
    assert_eq!(request.messages[0].content.as_deref(), Some("E3 system."));
    assert_eq!(last_user_content(&request.messages).as_deref(), Some("hello"));
    assert_eq!(thread.messages().await.unwrap().len(), 2, "the observed writes happened");

    let failures = logs.failure_lines();
    let timed_out = |id: &str, ms: u64| {
        failures.iter().filter(|line| line.contains(id) && line.contains(&format!("timed out after {ms} ms"))).count()
    };
    assert_eq!(timed_out("e3_slow_filter", 50), 1, "per-hook timeout_ms: {failures:#?}");
    assert_eq!(timed_out("e3_slow_system", 100), 1, "runtime-wide hook_timeout: {failures:#?}");
    assert_eq!(timed_out("e3_slow_observer", 30), 2, "an event hook too, once per message: {failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// E4: a panicking hook is a failed hook of its kind; the thread and the runtime survive.

#[hook(filter_messages, id = "e4_sync_panic")]
fn e4_sync_panic(_state: &ThreadState, _messages: Vec<HookMessage>) -> Vec<HookMessage> {
    panic!("e4_sync_panic fails on purpose");
}

#[hook(after_system_message, id = "e4_async_panic")]
async fn e4_async_panic(_state: &ThreadState, _system: &str) -> Option<String> {
    tokio::task::yield_now().await;
    panic!("e4_async_panic fails on purpose");
}

#[hook(tool_call_started, id = "e4_started_panic")]
fn e4_started_panic(_state: &ThreadState, _call: &HookToolCall, _progress: Option<&str>) {
    panic!("e4_started_panic fails on purpose");
}

#[hook(before_store_tool_result, id = "e4_store_panic")]
async fn e4_store_panic(_state: &ThreadState, _call: &ToolCallRecord, _result: HookToolResult) -> HookToolResult {
    tokio::task::yield_now().await;
    panic!("e4_store_panic fails on purpose");
}

/// A pre-write hook: its panic prevents the write of a sent message, as an error would (M6).
#[hook(before_create_message, id = "e4_create_panic")]
fn e4_create_panic(_state: &ThreadState, message: MessageRecord) -> MessageRecord {
    if message.content.as_deref() == Some("explode") {
        panic!("e4_create_panic fails on purpose");
    }
    message
}

define_prompt! {
    name: e4_prompt,
    model: "scripted",
    prompt: "E4 system.",
    tools: ["e4_tool"],
    hooks: [e4_sync_panic, e4_async_panic, e4_started_panic, e4_store_panic, e4_create_panic],
}

define_agent! {
    name: e4_agent,
    side_a: { prompt: e4_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn e4_panicking_hooks_leave_the_thread_and_runtime_running() {
    let logs = LogCapture::start();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_e4", "e4_tool", "{}"),
        ScriptedResponse::text("first"),
        ScriptedResponse::text("second"),
        ScriptedResponse::text("other thread"),
    ]);
    let runtime = Runtime::builder()
        .agent::<e4_agent>()
        .model("scripted", model.clone())
        .tool(FnTool::new("e4_tool", "Works.", |_| async { HookToolResult::success("tool output") }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e4_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("first"));
    // The panicking transforms kept the last good value.
    let request = &model.requests()[0];
    assert_eq!(request.messages[0].content.as_deref(), Some("E4 system."));
    assert_eq!(last_user_content(&request.messages).as_deref(), Some("hello"));
    assert_eq!(tool_message(&thread, "call_e4").await.content.as_deref(), Some("tool output"));

    // A panicking pre-write hook prevents the sent message, like an error of that kind would.
    let prevented = thread.send("explode").await.unwrap();
    assert_eq!(prevented.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert!(thread.messages().await.unwrap().iter().all(|message| message.content.as_deref() != Some("explode")));

    // The same thread and the runtime go on working.
    let again = thread.send("again").await.unwrap();
    assert_eq!((again.status, again.reply.as_deref()), (ThreadStatus::Idle, Some("second")));
    let other = runtime.create_thread("e4_agent", ThreadOptions::default()).await.unwrap();
    let reply = other.send("hi").await.unwrap();
    assert_eq!(reply.reply.as_deref(), Some("other thread"));

    let failures = logs.failure_lines();
    for id in ["e4_sync_panic", "e4_async_panic", "e4_started_panic", "e4_store_panic", "e4_create_panic"] {
        assert!(failures.iter().any(|line| line.contains(id) && line.contains("panicked")), "{id}: {failures:#?}");
    }
}

// ---------------------------------------------------------------------------------------------
// E5: failure logs name the hook id and kind and give the hook's own error message (its author
// keeps sensitive data out of it, as the spec requires), never message contents, arguments,
// results or a panic's payload.

const SECRET_USER: &str = "s3cr3t-user-7f3a";
const SECRET_ARGS: &str = "s3cr3t-args-91c2";
const SECRET_RESULT: &str = "s3cr3t-result-55d0";
const SECRET_REPLY: &str = "s3cr3t-reply-0b1e";

fn contents(messages: &[HookMessage]) -> String {
    messages.iter().filter_map(|message| message.content.clone()).collect::<Vec<_>>().join(" ")
}

/// An author-written error message that says what failed without the data: the hook is handed
/// the contents (`_seen`) but does not put them in the message.
fn refusal(what: &str, _seen: &str) -> HookError {
    HookError::new(format!("e5 refused to {what}"))
}

#[hook(after_system_message, id = "e5_system_slow", timeout_ms = 20)]
async fn e5_system_slow(_state: &ThreadState, system: &str) -> Option<String> {
    tokio::time::sleep(Duration::from_secs(5)).await;
    Some(system.to_owned())
}

#[hook(filter_messages, id = "e5_filter_fails")]
fn e5_filter_fails(_state: &ThreadState, messages: Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
    Err(refusal("filter", &contents(&messages)))
}

#[hook(prefilter_llm_history, id = "e5_prefilter_fails")]
fn e5_prefilter_fails(_state: &ThreadState, messages: Vec<LlmMessage>) -> Result<Vec<LlmMessage>, HookError> {
    Err(refusal("prefilter", &serde_json::to_string(&messages).unwrap()))
}

/// Fails on the writes that go on anyway (M9): assistant and tool messages.
#[hook(before_create_message, id = "e5_create_fails")]
fn e5_create_fails(_state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    if message.role == Role::User {
        return Ok(message);
    }
    Err(refusal("create", &serde_json::to_string(&message).unwrap()))
}

#[hook(after_create_message, id = "e5_created_fails")]
async fn e5_created_fails(_state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
    Err(refusal("observe", &format!("{:?}", message.content)))
}

#[hook(tool_call_started, id = "e5_started_fails")]
fn e5_started_fails(_state: &ThreadState, call: &HookToolCall, _progress: Option<&str>) -> Result<(), HookError> {
    Err(refusal("start", &call.function.arguments))
}

#[hook(tool_call_done, id = "e5_done_panics")]
fn e5_done_panics(_state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    panic!("cannot finish {} with {:?}", call.function.arguments, result.result);
}

#[hook(after_tool_call_success, id = "e5_success_fails")]
async fn e5_success_fails(
    _state: &ThreadState,
    call: &HookToolCall,
    result: &HookToolResult,
) -> Result<Option<HookToolResult>, HookError> {
    Err(refusal("post-process", &format!("{} {:?}", call.function.arguments, result.result)))
}

#[hook(before_store_tool_result, id = "e5_store_fails")]
fn e5_store_fails(
    _state: &ThreadState,
    call: &ToolCallRecord,
    result: HookToolResult,
) -> Result<HookToolResult, HookError> {
    Err(refusal("store", &format!("{} {:?}", call.function.arguments, result.result)))
}

define_prompt! {
    name: e5_prompt,
    model: "scripted",
    prompt: "E5 system.",
    tools: ["e5_lookup"],
    hooks: [
        e5_system_slow,
        e5_filter_fails,
        e5_prefilter_fails,
        e5_create_fails,
        e5_created_fails,
        e5_started_fails,
        e5_done_panics,
        e5_success_fails,
        e5_store_fails,
    ],
}

define_agent! {
    name: e5_agent,
    side_a: { prompt: e5_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn e5_failure_logs_name_hook_and_kind_but_never_contents() {
    let logs = LogCapture::start();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_e5", "e5_lookup", &format!(r#"{{"token":"{SECRET_ARGS}"}}"#)),
        ScriptedResponse::text(SECRET_REPLY),
    ]);
    let runtime = Runtime::builder()
        .agent::<e5_agent>()
        .model("scripted", model)
        .tool(FnTool::new("e5_lookup", "Looks up.", |_| async { HookToolResult::success(SECRET_RESULT) }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e5_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send(&format!("my password is {SECRET_USER}")).await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some(SECRET_REPLY));
    // The run really handled the secrets (so the hooks had them to leak).
    let stored = serde_json::to_string(&thread.messages().await.unwrap()).unwrap();
    for secret in [SECRET_USER, SECRET_ARGS, SECRET_RESULT, SECRET_REPLY] {
        assert!(stored.contains(secret), "{secret} not in the stored history");
    }

    let text = logs.text();
    let failures = logs.failure_lines();
    for (id, kind, what) in [
        ("e5_system_slow", "after_system_message", "timed out after 20 ms"),
        ("e5_filter_fails", "filter_messages", "e5 refused to filter"),
        ("e5_prefilter_fails", "prefilter_llm_history", "e5 refused to prefilter"),
        ("e5_create_fails", "before_create_message", "e5 refused to create"),
        ("e5_created_fails", "after_create_message", "e5 refused to observe"),
        ("e5_started_fails", "tool_call_started", "e5 refused to start"),
        // A panic is reported by its location; its payload (which holds contents) never is.
        ("e5_done_panics", "tool_call_done", "panicked at tests/tests/it/conformance_errors.rs:"),
        ("e5_success_fails", "after_tool_call_success", "e5 refused to post-process"),
        ("e5_store_fails", "before_store_tool_result", "e5 refused to store"),
    ] {
        assert!(
            failures
                .iter()
                .any(|line| line.contains(&format!("Error running {kind} hook `{id}`")) && line.contains(what)),
            "no `[Hooks] ✗` line names {id} and {kind} with `{what}`:\n{text}"
        );
    }
    assert!(!text.contains("s3cr3t"), "a secret reached the logs:\n{text}");
}
