//! Conformance of the message lifecycle (M1-M10), run end to end through a runtime with a
//! scripted model whose recorded requests prove whether a turn ran.
//!
//! Every test has its own hooks, prompts and agents (or records keyed by thread id), so tests
//! running in parallel never see each other's records. The M9 tests capture logs on a
//! current_thread runtime, where the whole run happens on the test's thread.

use crate::support;
use crate::support_store;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hooks_runtime::ThreadOptions;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, StopReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{Attachment, MessageQuery, ToolAttachment};
use serde_json::json;
use support::{Recorder, capture_logs, request_has, texts};

const ALL: MessageQuery = MessageQuery::new().with_silent(true);

fn ok_tool(name: &'static str) -> FnTool {
    FnTool::new(name, "Answers ok.", |_args| async { HookToolResult::success("ok") })
}

/// A tool that counts its calls.
fn counting_tool(name: &'static str, result: HookToolResult) -> (FnTool, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let tool = FnTool::new(name, "Counts its calls.", move |_args| {
        counter.fetch_add(1, Ordering::SeqCst);
        let result = result.clone();
        async move { result }
    });
    (tool, calls)
}

fn roles(messages: &[HookMessage]) -> Vec<Role> {
    messages.iter().map(|m| m.role).collect()
}

// ---------------------------------------------------------------------------------------------
// M1: before_create_message runs before every insert; its result is what is inserted.

static M1_SEEN: Recorder<(Role, bool)> = Recorder::new();

#[hook(before_create_message, id = "m1_stamp")]
async fn m1_stamp(state: &ThreadState, mut message: MessageRecord) -> Result<MessageRecord, HookError> {
    let stored = state.get_messages(ALL).await?;
    let already_stored = stored.iter().any(|m| m.id == message.id);
    M1_SEEN.record(&state.thread_id, (message.role, already_stored));
    message.extra.insert("metadata".into(), json!({ "stamped_role": message.role.as_str() }));
    Ok(message)
}

define_prompt! { name: m1_prompt, model: "scripted", prompt: "M1.", tools: ["m1_tool"] }
define_agent! {
    name: m1_agent,
    side_a: { prompt: m1_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
    hooks: [m1_stamp],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_before_create_message_runs_before_every_insert_and_its_result_is_stored() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "m1_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = support_store::builder()
        .await
        .agent::<m1_agent>()
        .model("scripted", model)
        .tool(ok_tool("m1_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("m1_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();
    thread.inject_message(MessageRecord::new(Role::Assistant, "at rest")).await.unwrap();

    let stored = thread.messages().await.unwrap();
    let expected = [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::Assistant];
    assert_eq!(roles(&stored), expected);
    for message in &stored {
        assert_eq!(
            message.extra.get("metadata"),
            Some(&json!({ "stamped_role": message.role.as_str() })),
            "stored as the hook returned it: {message:?}"
        );
    }
    let seen = M1_SEEN.of(thread.id());
    assert_eq!(seen.iter().map(|(role, _)| *role).collect::<Vec<_>>(), expected, "once per insert");
    assert!(seen.iter().all(|(_, already_stored)| !already_stored), "runs before the insert: {seen:?}");
}

// ---------------------------------------------------------------------------------------------
// M2: a before_create_message error prevents the insert, the remaining hooks of that kind do not
// run, inject_message returns the error, nothing is persisted.

static M2_SECOND: Recorder<String> = Recorder::new();
static M2_CREATED: Recorder<String> = Recorder::new();
static M2_FROM_HOOK: Recorder<Result<String, String>> = Recorder::new();

#[hook(before_create_message, id = "m2_reject")]
fn m2_reject(_state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    if message.content.as_deref().is_some_and(|text| text.contains("forbidden")) {
        return Err(HookError::new("forbidden content"));
    }
    Ok(message)
}

#[hook(before_create_message, id = "m2_second")]
fn m2_second(state: &ThreadState, message: MessageRecord) -> MessageRecord {
    M2_SECOND.record(&state.thread_id, message.content.clone().unwrap_or_default());
    message
}

#[hook(after_create_message, id = "m2_after")]
fn m2_after(state: &ThreadState, message: &MessageRecord) {
    M2_CREATED.record(&state.thread_id, message.content.clone().unwrap_or_default());
}

#[hook(after_system_message, id = "m2_inject_from_hook")]
async fn m2_inject_from_hook(state: &ThreadState, _system: &str) -> Option<String> {
    let result = state.inject_message(MessageRecord::new(Role::User, "forbidden from a hook")).await;
    M2_FROM_HOOK.record(&state.thread_id, result.map(|m| m.id).map_err(|error| error.message().to_owned()));
    None
}

define_prompt! { name: m2_prompt, model: "scripted", prompt: "M2." }
define_agent! {
    name: m2_agent,
    side_a: { prompt: m2_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m2_inject_from_hook, m2_reject, m2_second, m2_after],
}

async fn m2_thread(model: ScriptedModel) -> hooks_runtime::Thread {
    let runtime = support_store::builder().await.agent::<m2_agent>().model("scripted", model).build().unwrap();
    runtime.create_thread("m2_agent", ThreadOptions::default()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_before_create_failure_prevents_insert_and_skips_remaining_hooks() {
    let thread = m2_thread(ScriptedModel::new([])).await;
    let error = thread.inject_message(MessageRecord::new(Role::User, "forbidden at rest")).await.unwrap_err();
    assert_eq!(error.message(), "forbidden content", "inject_message returns the hook's error");
    assert!(thread.messages().await.unwrap().is_empty(), "nothing persisted");
    assert!(M2_SECOND.of(thread.id()).is_empty(), "the second hook does not run for that write");
    assert!(M2_CREATED.of(thread.id()).is_empty(), "no after_create_message for a prevented write");

    // The same chain lets an allowed message through both hooks.
    thread.inject_message(MessageRecord::new(Role::User, "allowed")).await.unwrap();
    assert_eq!(M2_SECOND.of(thread.id()), ["allowed"]);
    assert_eq!(texts(&thread.messages().await.unwrap()), ["allowed"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m2_state_inject_message_from_a_hook_returns_the_error() {
    let thread = m2_thread(ScriptedModel::new([ScriptedResponse::text("ok")])).await;
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(M2_FROM_HOOK.of(thread.id()), [Err("forbidden content".to_owned())]);
    assert_eq!(texts(&thread.messages().await.unwrap()), ["hello", "ok"]);
    assert!(!M2_SECOND.of(thread.id()).iter().any(|text| text.contains("forbidden")));
}

// ---------------------------------------------------------------------------------------------
// M3: after_create_message runs after every successful insert; its failure leaves the message.

static M3_SEEN: Recorder<(String, bool)> = Recorder::new();

#[hook(after_create_message, id = "m3_after_fails")]
async fn m3_after_fails(state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
    let stored = state.get_messages(ALL).await?;
    M3_SEEN.record(&state.thread_id, (message.id.clone(), stored.iter().any(|m| m.id == message.id)));
    Err(HookError::new("analytics backend unreachable"))
}

define_prompt! { name: m3_prompt, model: "scripted", prompt: "M3.", tools: ["m3_tool"] }
define_agent! {
    name: m3_agent,
    side_a: { prompt: m3_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
    hooks: [m3_after_fails],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m3_after_create_message_runs_after_every_insert_and_its_failure_keeps_the_message() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "m3_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = support_store::builder()
        .await
        .agent::<m3_agent>()
        .model("scripted", model)
        .tool(ok_tool("m3_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("m3_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("done"));
    let injected = thread.inject_message(MessageRecord::new(Role::User, "at rest")).await;
    assert!(injected.is_ok(), "a post-write failure is not the write's failure");

    let stored = thread.messages().await.unwrap();
    assert_eq!(roles(&stored), [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::User]);
    let seen = M3_SEEN.of(thread.id());
    let ids: Vec<String> = stored.iter().map(|m| m.id.clone()).collect();
    assert_eq!(seen.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(), ids, "once per insert, in order");
    assert!(seen.iter().all(|(_, stored)| *stored), "runs after the insert: {seen:?}");
}

// ---------------------------------------------------------------------------------------------
// M4: before_update_message runs before every update; its result is applied; its error prevents
// the update and update_message returns it.

static M4_STORED_BEFORE: Recorder<String> = Recorder::new();

#[hook(before_update_message, id = "m4_before_update")]
async fn m4_before_update(
    state: &ThreadState,
    message_id: &str,
    mut update: MessageUpdate,
) -> Result<MessageUpdate, HookError> {
    let stored = state.get_messages(ALL).await?;
    let current = stored.iter().find(|m| m.id == message_id).and_then(|m| m.content.clone()).unwrap_or_default();
    M4_STORED_BEFORE.record(&state.thread_id, current);
    if update.content.as_deref().is_some_and(|text| text.contains("reject")) {
        return Err(HookError::new("update refused"));
    }
    update.extra.insert("edited_by".into(), json!("m4"));
    Ok(update)
}

static M4_IN_RUN: Recorder<Result<String, String>> = Recorder::new();

/// During a run, updates each assistant message twice through `state.update_message`: once with
/// an update the hook refuses, once with one it lets through.
#[hook(after_create_message, id = "m4_update_in_run")]
async fn m4_update_in_run(state: &ThreadState, message: &MessageRecord) {
    if message.role != Role::Assistant {
        return;
    }
    for text in ["reject in run", "edited in run"] {
        let update = MessageUpdate::new().with_content(text);
        let result = state.update_message(&message.id, update).await;
        M4_IN_RUN.record(
            &state.thread_id,
            result.map(|m| m.content.unwrap_or_default()).map_err(|error| error.message().to_owned()),
        );
    }
}

define_prompt! { name: m4_prompt, model: "scripted", prompt: "M4." }
define_agent! {
    name: m4_agent,
    side_a: { prompt: m4_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m4_before_update, m4_update_in_run],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_before_update_message_result_applied_and_its_error_prevents_the_update() {
    let runtime =
        support_store::builder().await.agent::<m4_agent>().model("scripted", ScriptedModel::new([])).build().unwrap();
    let thread = runtime.create_thread("m4_agent", ThreadOptions::default()).await.unwrap();
    let message = thread.inject_message(MessageRecord::new(Role::User, "original")).await.unwrap();

    let update = MessageUpdate::new().with_content("edited");
    let updated = thread.update_message(&message.id, update).await.unwrap();
    assert_eq!(updated.content.as_deref(), Some("edited"));
    assert_eq!(updated.extra.get("edited_by"), Some(&json!("m4")), "the hook's update is applied");
    let stored = thread.messages().await.unwrap();
    assert_eq!(stored[0].content.as_deref(), Some("edited"));
    assert_eq!(stored[0].extra.get("edited_by"), Some(&json!("m4")));

    let rejected = MessageUpdate::new().with_content("reject this");
    let error = thread.update_message(&message.id, rejected).await.unwrap_err();
    assert_eq!(error.message(), "update refused", "update_message returns the hook's error");
    assert_eq!(thread.messages().await.unwrap()[0].content.as_deref(), Some("edited"), "update prevented");

    assert_eq!(M4_STORED_BEFORE.of(thread.id()), ["original", "edited"], "runs before each update");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m4_state_update_message_during_a_run_returns_the_hook_error() {
    let model = ScriptedModel::new([ScriptedResponse::text("reply")]);
    let runtime = support_store::builder().await.agent::<m4_agent>().model("scripted", model).build().unwrap();
    let thread = runtime.create_thread("m4_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);

    assert_eq!(
        M4_IN_RUN.of(thread.id()),
        [Err("update refused".to_owned()), Ok("edited in run".to_owned())],
        "state.update_message returns the hook's error, and applies an allowed update"
    );
    assert_eq!(M4_STORED_BEFORE.of(thread.id()), ["reply", "reply"], "the refused update left the message as it was");
    let stored = thread.messages().await.unwrap();
    assert_eq!(texts(&stored), ["hello", "edited in run"]);
    assert_eq!(stored[1].extra.get("edited_by"), Some(&json!("m4")));
}

// ---------------------------------------------------------------------------------------------
// M5: after_update_message runs after every successful update; its failure leaves the update.

static M5_SEEN: Recorder<(String, String)> = Recorder::new();

#[hook(after_update_message, id = "m5_after_update_fails")]
async fn m5_after_update_fails(state: &ThreadState, message: &HookMessage) -> Result<(), HookError> {
    let stored = state.get_messages(ALL).await?;
    let current = stored.iter().find(|m| m.id == message.id).and_then(|m| m.content.clone()).unwrap_or_default();
    M5_SEEN.record(&state.thread_id, (message.content.clone().unwrap_or_default(), current));
    Err(HookError::new("audit log unreachable"))
}

define_prompt! { name: m5_prompt, model: "scripted", prompt: "M5." }
define_agent! {
    name: m5_agent,
    side_a: { prompt: m5_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m5_after_update_fails],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m5_after_update_message_runs_after_each_update_and_its_failure_keeps_it() {
    let runtime =
        support_store::builder().await.agent::<m5_agent>().model("scripted", ScriptedModel::new([])).build().unwrap();
    let thread = runtime.create_thread("m5_agent", ThreadOptions::default()).await.unwrap();
    let message = thread.inject_message(MessageRecord::new(Role::User, "original")).await.unwrap();
    assert!(M5_SEEN.of(thread.id()).is_empty(), "not run on inserts");

    for text in ["edited", "edited twice"] {
        let update = MessageUpdate::new().with_content(text);
        let updated = thread.update_message(&message.id, update).await;
        assert_eq!(updated.unwrap().content.as_deref(), Some(text), "the hook's failure is not the update's");
        assert_eq!(thread.messages().await.unwrap()[0].content.as_deref(), Some(text), "the update stays");
    }
    assert_eq!(
        M5_SEEN.of(thread.id()),
        [("edited".to_owned(), "edited".to_owned()), ("edited twice".to_owned(), "edited twice".to_owned())],
        "runs after each update, on the updated message"
    );
}

// ---------------------------------------------------------------------------------------------
// M6: a sent user message that a hook prevents is not stored, no turn starts, status failed with
// message_hook_error.

#[hook(before_create_message, id = "m6_reject_blocked")]
fn m6_reject_blocked(_state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    if message.content.as_deref().is_some_and(|text| text.contains("blocked")) {
        return Err(HookError::new("blocked word"));
    }
    Ok(message)
}

define_prompt! { name: m6_prompt, model: "scripted", prompt: "M6." }
define_agent! {
    name: m6_agent,
    side_a: { prompt: m6_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m6_reject_blocked],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m6_prevented_sent_message_is_not_stored_no_turn_and_status_failed() {
    let model = ScriptedModel::new([ScriptedResponse::text("reply")]);
    let runtime = support_store::builder().await.agent::<m6_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("m6_agent", ThreadOptions::default()).await.unwrap();

    let outcome = thread.send("a blocked message").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert_eq!(outcome.steps, 0);
    assert_eq!(thread.status(), ThreadStatus::Failed(FailReason::MessageHookError));
    assert!(model.requests().is_empty(), "no turn starts");
    assert!(thread.messages().await.unwrap().is_empty(), "not stored");

    // An allowed message afterwards runs a turn normally.
    let outcome = thread.send("a fine message").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(model.requests().len(), 1);
    assert_eq!(texts(&thread.messages().await.unwrap()), ["a fine message", "reply"]);
}

// ---------------------------------------------------------------------------------------------
// M7: a prevented queued message leaves the queue, the run goes on with the others; when all are
// prevented no turn starts and the status is failed with message_hook_error.

static M7_SEEN: Recorder<String> = Recorder::new();

#[hook(before_create_message, id = "m7_reject_drop")]
fn m7_reject_drop(state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    let text = message.content.clone().unwrap_or_default();
    M7_SEEN.record(&state.thread_id, text.clone());
    if text.starts_with("drop") {
        return Err(HookError::new("dropped"));
    }
    Ok(message)
}

define_prompt! { name: m7_prompt, model: "scripted", prompt: "M7." }
define_agent! {
    name: m7_agent,
    side_a: { prompt: m7_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m7_reject_drop],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m7_prevented_queued_message_leaves_the_queue_and_the_others_run() {
    let model = ScriptedModel::new([ScriptedResponse::text("reply")]);
    let runtime = support_store::builder().await.agent::<m7_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("m7_agent", ThreadOptions::default()).await.unwrap();
    for text in ["keep one", "drop me", "keep two"] {
        thread.queue_message(MessageRecord::new(Role::User, text)).await.unwrap();
    }
    let outcome = thread.run_queued().await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "a turn runs");
    assert!(request_has(&requests[0], "keep one") && request_has(&requests[0], "keep two"));
    assert!(!request_has(&requests[0], "drop me"));
    assert_eq!(texts(&thread.messages().await.unwrap()), ["keep one", "keep two", "reply"]);

    // It left the queue: another run does not try it again.
    thread.run_queued().await.unwrap();
    let attempts = M7_SEEN.of(thread.id()).iter().filter(|text| *text == "drop me").count();
    assert_eq!(attempts, 1);
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m7_every_queued_message_prevented_starts_no_turn_and_fails() {
    let model = ScriptedModel::new([ScriptedResponse::text("reply")]);
    let runtime = support_store::builder().await.agent::<m7_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("m7_agent", ThreadOptions::default()).await.unwrap();
    thread.queue_message(MessageRecord::new(Role::User, "drop a")).await.unwrap();
    thread.queue_message(MessageRecord::new(Role::User, "drop b")).await.unwrap();
    let outcome = thread.run_queued().await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert_eq!(thread.status(), ThreadStatus::Failed(FailReason::MessageHookError));
    assert!(model.requests().is_empty(), "no turn starts");
    assert!(thread.messages().await.unwrap().is_empty());
    assert_eq!(M7_SEEN.of(thread.id()), ["drop a", "drop b"], "every queued message was tried");
}

// ---------------------------------------------------------------------------------------------
// M8: a tool call queued with state.queue_tool on an idle thread whose message a hook prevents
// is not stored, the tool does not run, the run settles as failed.

static M8_PREVENTED: Recorder<String> = Recorder::new();

#[hook(after_thread_created, id = "m8_queue_on_create")]
fn m8_queue_on_create(state: &ThreadState) {
    state.queue_tool("m8_tool", json!({ "n": 1 }));
}

#[hook(before_create_message, id = "m8_reject_tool_calls")]
fn m8_reject_tool_calls(state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    if let Some(calls) = &message.tool_calls {
        M8_PREVENTED.record(&state.thread_id, calls.clone());
        return Err(HookError::new("no queued tools"));
    }
    Ok(message)
}

define_prompt! { name: m8_prompt, model: "scripted", prompt: "M8.", tools: ["m8_tool"] }
define_agent! {
    name: m8_agent,
    side_a: { prompt: m8_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m8_queue_on_create, m8_reject_tool_calls],
}
define_agent! {
    name: m8_control_agent,
    side_a: { prompt: m8_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [m8_queue_on_create],
}

async fn m8_run(agent: &str) -> (hooks_runtime::Thread, hooks_runtime::RunOutcome, usize, ScriptedModel) {
    let (tool, calls) = counting_tool("m8_tool", HookToolResult::success("ran"));
    let model = ScriptedModel::new([ScriptedResponse::text("unused")]);
    let runtime = support_store::builder()
        .await
        .agent::<m8_agent>()
        .agent::<m8_control_agent>()
        .model("scripted", model.clone())
        .tool(tool)
        .build()
        .unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.status(), ThreadStatus::Idle);
    let outcome = thread.run_queued().await.unwrap();
    (thread, outcome, calls.load(Ordering::SeqCst), model)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m8_prevented_queued_tool_call_does_not_run_and_the_run_fails() {
    let (thread, outcome, tool_calls, model) = m8_run("m8_agent").await;
    assert!(matches!(outcome.status, ThreadStatus::Failed(_)), "{:?}", outcome.status);
    assert!(matches!(thread.status(), ThreadStatus::Failed(_)));
    assert_eq!(tool_calls, 0, "the tool does not run");
    assert_eq!(M8_PREVENTED.of(thread.id()).len(), 1, "the tool-call message was attempted once");
    assert!(M8_PREVENTED.of(thread.id())[0].contains("m8_tool"));
    assert!(thread.messages().await.unwrap().is_empty(), "nothing stored");
    assert!(model.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m8_control_queued_tool_call_runs_when_not_prevented() {
    let (thread, outcome, tool_calls, _model) = m8_run("m8_control_agent").await;
    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(tool_calls, 1);
    let stored = thread.messages().await.unwrap();
    assert_eq!(roles(&stored), [Role::Assistant, Role::Tool]);
    assert_eq!(support::text(&stored[1]), "ran");
}

// ---------------------------------------------------------------------------------------------
// M9: a model step's message, a model step's failed status and a tool result message are written
// when a pre-write hook fails: logged with `[Hooks] ✗`, written with the last good value.

#[hook(before_create_message, id = "m9_tag")]
fn m9_tag(_state: &ThreadState, mut message: MessageRecord) -> MessageRecord {
    message.extra.insert("m9_tag".into(), json!("kept"));
    message
}

#[hook(before_create_message, id = "m9_fail_non_user")]
fn m9_fail_non_user(_state: &ThreadState, mut message: MessageRecord) -> Result<MessageRecord, HookError> {
    if message.role != Role::User {
        return Err(HookError::new("refusing non-user messages"));
    }
    message.extra.insert("m9_fail_passed".into(), json!(true));
    Ok(message)
}

#[hook(before_create_message, id = "m9_after")]
fn m9_after(_state: &ThreadState, mut message: MessageRecord) -> MessageRecord {
    message.extra.insert("m9_after".into(), json!(true));
    message
}

define_prompt! {
    name: m9_prompt,
    model: "scripted",
    prompt: "M9.",
    tools: ["m9_tool"],
    hooks: [m9_tag, m9_fail_non_user, m9_after],
}
define_agent! {
    name: m9_agent,
    side_a: { prompt: m9_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

async fn m9_run(responses: Vec<ScriptedResponse>) -> (hooks_runtime::Thread, hooks_runtime::RunOutcome) {
    let runtime = support_store::builder()
        .await
        .agent::<m9_agent>()
        .model("scripted", ScriptedModel::new(responses))
        .tool(ok_tool("m9_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("m9_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    (thread, outcome)
}

fn assert_last_good(message: &HookMessage) {
    assert_eq!(message.extra.get("m9_tag"), Some(&json!("kept")), "last good value written: {message:?}");
    assert_eq!(message.extra.get("m9_after"), Some(&json!(true)), "the chain went on: {message:?}");
    assert_eq!(message.extra.get("m9_fail_passed"), None);
}

fn assert_failure_logged(logs: &support::LogBuffer, at_least: usize) {
    let lines = logs.lines_with("[Hooks] ✗");
    let ours: Vec<&String> = lines.iter().filter(|line| line.contains("m9_fail_non_user")).collect();
    assert!(ours.len() >= at_least, "logs: {}", logs.contents());
    assert!(ours.iter().all(|line| line.contains("before_create_message")), "{ours:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn m9_model_step_message_written_despite_failing_pre_write_hook() {
    let (logs, _guard) = capture_logs();
    let (thread, outcome) = m9_run(vec![ScriptedResponse::text("the reply")]).await;
    assert_eq!(outcome.status, ThreadStatus::Idle);
    let stored = thread.messages().await.unwrap();
    assert_eq!(texts(&stored), ["hello", "the reply"]);
    assert_eq!(stored[0].extra.get("m9_fail_passed"), Some(&json!(true)));
    assert_last_good(&stored[1]);
    assert_failure_logged(&logs, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn m9_model_step_failed_status_written_despite_failing_pre_write_hook() {
    let (logs, _guard) = capture_logs();
    let (thread, outcome) = m9_run(Vec::new()).await;
    assert!(matches!(outcome.status, ThreadStatus::Failed(_)), "{:?}", outcome.status);
    let stored = thread.messages().await.unwrap();
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert_eq!(stored[1].role, Role::Assistant);
    assert_eq!(stored[1].extra_str("status"), Some("failed"), "{:?}", stored[1]);
    assert_last_good(&stored[1]);
    assert_failure_logged(&logs, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn m9_tool_result_message_written_despite_failing_pre_write_hook() {
    let (logs, _guard) = capture_logs();
    let (thread, outcome) =
        m9_run(vec![ScriptedResponse::tool_call("call_m9", "m9_tool", "{}"), ScriptedResponse::text("done")]).await;
    assert_eq!(outcome.status, ThreadStatus::Idle);
    let stored = thread.messages().await.unwrap();
    assert_eq!(roles(&stored), [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    let tool = &stored[2];
    assert_eq!(tool.tool_call_id.as_deref(), Some("call_m9"));
    assert_eq!(support::text(tool), "ok");
    for message in &stored[1..] {
        assert_last_good(message);
    }
    assert_failure_logged(&logs, 3);
}

// ---------------------------------------------------------------------------------------------
// M10: a handoff user message, a generated-asset path message and the repeated tool-error notice
// that a hook prevents are not stored, but the handoff or stop still happens.

static M10_PREVENTED: Recorder<MessageRecord> = Recorder::new();

/// Lets through only user messages that a person sent (they start with `user:`).
#[hook(before_create_message, id = "m10_prevent_runtime_user_messages")]
fn m10_prevent_runtime_user_messages(state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    if message.role == Role::User && !message.content.as_deref().unwrap_or_default().starts_with("user:") {
        M10_PREVENTED.record(&state.thread_id, message);
        return Err(HookError::new("not from a person"));
    }
    Ok(message)
}

define_prompt! {
    name: m10_front_prompt,
    model: "scripted",
    prompt: "M10 front.",
    tools: ["m10_back", "m10_failing_tool", "m10_asset_tool"],
    hooks: [m10_prevent_runtime_user_messages],
}
define_prompt! { name: m10_back_prompt, model: "scripted", prompt: "M10 back." }
define_agent! {
    name: m10_back,
    side_a: { prompt: m10_back_prompt, stop_on_response: true },
    side_b: { human: true },
}
define_agent! {
    name: m10_front,
    side_a: { prompt: m10_front_prompt, stop_on_response: true, max_steps: 8 },
    side_b: { human: true },
}

async fn m10_thread(responses: Vec<ScriptedResponse>, tools: Vec<FnTool>) -> (hooks_runtime::Thread, ScriptedModel) {
    let model = ScriptedModel::new(responses);
    let mut builder =
        support_store::builder().await.agent::<m10_front>().agent::<m10_back>().model("scripted", model.clone());
    for tool in tools {
        builder = builder.tool(tool);
    }
    let runtime = builder.build().unwrap();
    (runtime.create_thread("m10_front", ThreadOptions::default()).await.unwrap(), model)
}

fn m10_tools() -> (Vec<FnTool>, Arc<AtomicUsize>) {
    let (failing, failures) = counting_tool("m10_failing_tool", HookToolResult::error("service down"));
    let asset = FnTool::new("m10_asset_tool", "Draws a chart.", |_args| async {
        let mut result = HookToolResult::success("chart drawn");
        result.attachments = Some(vec![Attachment::New(ToolAttachment::new("chart.png", "image/png", "aGVsbG8="))]);
        result
    });
    (vec![failing, asset], failures)
}

fn only_person_messages(stored: &[HookMessage]) -> bool {
    stored.iter().filter(|m| m.role == Role::User).all(|m| support::text(m).starts_with("user:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m10_prevented_handoff_message_not_stored_but_handoff_happens() {
    let (tools, _) = m10_tools();
    let (thread, model) =
        m10_thread(vec![ScriptedResponse::tool_call("call_h", "m10_back", r#"{"message":"take over please"}"#)], tools)
            .await;
    let outcome = thread.send("user: hand me over").await.unwrap();

    assert_eq!(outcome.handed_off_to.as_deref(), Some("m10_back"));
    assert_eq!(thread.agent_name(), "m10_back");
    assert!(!matches!(outcome.status, ThreadStatus::Failed(_)), "{:?}", outcome.status);
    assert_eq!(model.requests().len(), 1);
    let prevented = M10_PREVENTED.of(thread.id());
    assert_eq!(prevented.len(), 1, "the handoff message was attempted: {prevented:?}");
    assert_eq!(prevented[0].content.as_deref(), Some("take over please"));
    let stored = thread.messages().await.unwrap();
    assert!(only_person_messages(&stored), "{:?}", texts(&stored));
    assert!(!stored.iter().any(|m| support::text(m) == "take over please"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m10_prevented_repeated_tool_error_notice_not_stored_but_the_turn_stops() {
    let (tools, failures) = m10_tools();
    let (thread, model) = m10_thread(
        vec![
            ScriptedResponse::tool_call("call_1", "m10_failing_tool", "{}"),
            ScriptedResponse::tool_call("call_2", "m10_failing_tool", "{}"),
            ScriptedResponse::tool_call("call_3", "m10_failing_tool", "{}"),
            ScriptedResponse::text("never requested"),
        ],
        tools,
    )
    .await;
    let outcome = thread.send("user: try the tool").await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::RepeatedToolError));
    assert_eq!(failures.load(Ordering::SeqCst), 3);
    assert_eq!(model.requests().len(), 3);
    let prevented = M10_PREVENTED.of(thread.id());
    assert_eq!(prevented.len(), 1, "the notice was attempted: {prevented:?}");
    let stored = thread.messages().await.unwrap();
    assert!(only_person_messages(&stored), "{:?}", texts(&stored));
    assert_eq!(stored.iter().filter(|m| m.role == Role::Tool).count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m10_prevented_generated_asset_message_not_stored_but_file_kept() {
    let (tools, _) = m10_tools();
    let (thread, _model) = m10_thread(
        vec![ScriptedResponse::tool_call("call_a", "m10_asset_tool", "{}"), ScriptedResponse::text("chart ready")],
        tools,
    )
    .await;
    let outcome = thread.send("user: draw a chart").await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("chart ready"));
    let prevented = M10_PREVENTED.of(thread.id());
    assert_eq!(prevented.len(), 1, "the asset path message was attempted: {prevented:?}");
    let path = prevented[0].extra.get("asset_path").and_then(|p| p.as_str()).expect("the asset path").to_owned();
    assert!(prevented[0].content.as_deref().unwrap_or_default().contains(&path));
    assert_eq!(thread.file(&path).as_deref(), Some("aGVsbG8="), "the file is kept");
    let stored = thread.messages().await.unwrap();
    assert!(only_person_messages(&stored), "{:?}", texts(&stored));
    assert!(!stored.iter().any(|m| support::text(m).contains(&path) && m.role == Role::User));
}
