//! E8: hook re-entrancy is bounded per thread. A hook that writes a message every time one is
//! written recursed until the stack overflowed and the process aborted; past
//! `MAX_HOOK_DEPTH` nested calls the inner call now fails with an error and a `[Hooks] ✗` line.
//! A hook that calls `Thread` methods on a handle of its own thread fails at once instead of
//! waiting for the run that called it.
//!
//! Without the bound the recursion tests abort the test process (stack overflow): they fail
//! loudly, not silently.

use crate::support;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use hooks_runtime::definition::MAX_HOOK_DEPTH;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use hooks_runtime::{Runtime, RuntimeError, Thread, ThreadOptions};
use support::{Recorder, capture_logs, texts};

fn runtime_of(agent: &str, model: ScriptedModel) -> Runtime {
    let builder = match agent {
        "e8_after_agent" => Runtime::builder().agent::<e8_after_agent>(),
        "e8_before_agent" => Runtime::builder().agent::<e8_before_agent>(),
        "e8_update_agent" => Runtime::builder().agent::<e8_update_agent>(),
        "e8_sequential_agent" => Runtime::builder().agent::<e8_sequential_agent>(),
        "e8_handle_agent" => Runtime::builder().agent::<e8_handle_agent>(),
        other => panic!("no agent {other}"),
    };
    builder.model("scripted", model).build().expect("runtime builds")
}

// ---------------------------------------------------------------------------------------------
// after_create_message that injects on every user message: 32 nested writes, then a refusal.

static E8_AFTER_ERRORS: Recorder<String> = Recorder::new();

/// Answers every user message with another, recording refusals in `errors`.
async fn echo(state: &ThreadState, message: &MessageRecord, errors: &Recorder<String>) -> Result<(), HookError> {
    if message.role != Role::User {
        return Ok(());
    }
    let injected = state.inject_message(MessageRecord::new(Role::User, "again")).await;
    if let Err(error) = &injected {
        errors.record(&state.thread_id, error.message().to_owned());
    }
    injected.map(drop)
}

#[hook(after_create_message, id = "e8_echo_after_create")]
async fn e8_echo_after_create(state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
    echo(state, message, &E8_AFTER_ERRORS).await
}

define_prompt! { name: e8_after_prompt, model: "scripted", prompt: "Echo." }
define_agent! {
    name: e8_after_agent,
    side_a: { prompt: e8_after_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [e8_echo_after_create],
}

#[tokio::test(flavor = "current_thread")]
async fn e8_after_create_message_hook_that_injects_every_time_is_bounded() {
    let (logs, _guard) = capture_logs();
    let runtime = runtime_of("e8_after_agent", ScriptedModel::new([ScriptedResponse::text("done")]));
    let thread = runtime.create_thread("e8_after_agent", ThreadOptions::default()).await.unwrap();

    let outcome = thread.send("hello").await.unwrap();

    // after_create_message failures keep the message: the run goes on to the model's reply.
    assert_eq!((outcome.status, outcome.reply.as_deref()), (ThreadStatus::Idle, Some("done")));
    let stored = texts(&thread.messages().await.unwrap());
    let again = stored.iter().filter(|text| *text == "again").count();
    assert_eq!(again, MAX_HOOK_DEPTH as usize, "one write per nesting level up to the limit: {stored:?}");
    assert_eq!(stored.first().map(String::as_str), Some("hello"));
    assert_eq!(stored.last().map(String::as_str), Some("done"));

    let errors = E8_AFTER_ERRORS.of(thread.id());
    assert_eq!(errors.len(), 1, "only the call past the limit fails: {errors:?}");
    assert!(
        errors[0].contains("state.inject_message") && errors[0].contains(&MAX_HOOK_DEPTH.to_string()),
        "{errors:?}"
    );
    let refusals = logs.lines_with("[Hooks] ✗ state.inject_message");
    assert_eq!(refusals.len(), 1, "{}", logs.contents());
    assert!(refusals[0].contains("`after_create_message` hook"), "the line names the hook point: {refusals:?}");
}

// The same recursion in a subagent's thread, run as a tool of its parent on a worker thread of a
// multi-thread runtime: the deepest stack the runtime builds, on a worker's own (smaller) stack.

static E8_CHILD_ERRORS: Recorder<String> = Recorder::new();
static E8_CHILD_THREADS: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[hook(after_create_message, id = "e8_echo_in_child")]
async fn e8_echo_in_child(state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
    E8_CHILD_THREADS.lock().unwrap_or_else(PoisonError::into_inner).push(state.thread_id.clone());
    echo(state, message, &E8_CHILD_ERRORS).await
}

define_prompt! { name: e8_child_prompt, model: "scripted", prompt: "Echo." }
define_agent! {
    name: e8_child_agent,
    side_a: { prompt: e8_child_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [e8_echo_in_child],
}

define_prompt! { name: e8_parent_prompt, model: "scripted", prompt: "Delegate." }
define_agent! {
    name: e8_parent_agent,
    side_a: { prompt: e8_parent_prompt, stop_on_response: true, subagents: [{ agent: e8_child_agent }] },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e8_recursion_in_a_subagent_on_a_worker_thread_is_bounded() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "e8_child_agent", r#"{"message":"hello"}"#),
        ScriptedResponse::text("child done"),
        ScriptedResponse::text("parent done"),
    ]);
    let runtime = Runtime::builder()
        .agent::<e8_parent_agent>()
        .agent::<e8_child_agent>()
        .model("scripted", model)
        .build()
        .expect("runtime builds");
    let thread = runtime.create_thread("e8_parent_agent", ThreadOptions::default()).await.unwrap();
    let run = thread.clone();
    let outcome = tokio::spawn(async move { run.send("go").await }).await.expect("the run is not a panic").unwrap();
    assert_eq!((outcome.status, outcome.reply.as_deref()), (ThreadStatus::Idle, Some("parent done")));
    let stored = thread.messages().await.unwrap();
    let tool = stored.iter().find(|message| message.role == Role::Tool).expect("the subagent's result");
    assert_eq!(tool.content.as_deref(), Some("child done"), "the child's run went on past the refusal");
    let child =
        E8_CHILD_THREADS.lock().unwrap_or_else(PoisonError::into_inner).first().cloned().expect("child hook ran");
    assert_eq!(E8_CHILD_ERRORS.of(&child).len(), 1, "the child's recursion was refused once");
}

// ---------------------------------------------------------------------------------------------
// before_create_message that injects before letting each message through: the refusal travels
// back up as each level's failure, and the sent message is prevented (M6).

#[hook(before_create_message, id = "e8_echo_before_create")]
async fn e8_echo_before_create(state: &ThreadState, message: MessageRecord) -> Result<MessageRecord, HookError> {
    state.inject_message(MessageRecord::new(Role::User, "again")).await?;
    Ok(message)
}

define_prompt! { name: e8_before_prompt, model: "scripted", prompt: "Echo." }
define_agent! {
    name: e8_before_agent,
    side_a: { prompt: e8_before_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [e8_echo_before_create],
}

#[tokio::test(flavor = "current_thread")]
async fn e8_before_create_message_recursion_fails_the_write_not_the_process() {
    let (logs, _guard) = capture_logs();
    let model = ScriptedModel::new([ScriptedResponse::text("never")]);
    let runtime = runtime_of("e8_before_agent", model.clone());
    let thread = runtime.create_thread("e8_before_agent", ThreadOptions::default()).await.unwrap();

    let outcome = thread.send("hello").await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert!(model.requests().is_empty(), "no turn started");
    assert!(thread.messages().await.unwrap().is_empty(), "every nested write was prevented");
    let refusals = logs.lines_with("[Hooks] ✗ state.inject_message");
    assert_eq!(refusals.len(), 1, "{}", logs.contents());
    assert!(refusals[0].contains("`before_create_message` hook"), "{refusals:?}");

    // The thread is usable afterwards, at rest too: the nesting count went back to zero. The
    // hook still recurses, so the injected message is refused the same way and not written.
    let error = thread.inject_message(MessageRecord::new(Role::User, "at rest")).await.unwrap_err();
    assert!(error.message().contains("state.inject_message"), "{}", error.message());
    assert_eq!(logs.lines_with("[Hooks] ✗ state.inject_message").len(), 2);
}

// ---------------------------------------------------------------------------------------------
// after_update_message that updates the message again: state.update_message is bounded too.

static E8_UPDATES: Recorder<u32> = Recorder::new();
static E8_UPDATE_ERRORS: Recorder<String> = Recorder::new();

#[hook(after_update_message, id = "e8_touch_after_update")]
async fn e8_touch_after_update(state: &ThreadState, message: &HookMessage) -> Result<(), HookError> {
    E8_UPDATES.record(&state.thread_id, 1);
    let update = MessageUpdate::new().with_content("touched");
    let updated = state.update_message(&message.id, update).await;
    if let Err(error) = &updated {
        E8_UPDATE_ERRORS.record(&state.thread_id, error.message().to_owned());
    }
    updated.map(drop)
}

define_prompt! { name: e8_update_prompt, model: "scripted", prompt: "Echo." }
define_agent! {
    name: e8_update_agent,
    side_a: { prompt: e8_update_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [e8_touch_after_update],
}

#[tokio::test(flavor = "current_thread")]
async fn e8_after_update_message_hook_that_updates_every_time_is_bounded() {
    let (logs, _guard) = capture_logs();
    let runtime = runtime_of("e8_update_agent", ScriptedModel::default());
    let thread = runtime.create_thread("e8_update_agent", ThreadOptions::default()).await.unwrap();
    let message = thread.inject_message(MessageRecord::new(Role::User, "first")).await.unwrap();

    let update = MessageUpdate::new().with_content("edited");
    thread.update_message(&message.id, update).await.unwrap();

    // After the outside update, and after each nested one up to the limit.
    assert_eq!(E8_UPDATES.of(thread.id()).len(), 1 + MAX_HOOK_DEPTH as usize);
    let errors = E8_UPDATE_ERRORS.of(thread.id());
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("state.update_message"), "{errors:?}");
    let refusals = logs.lines_with("[Hooks] ✗ state.update_message");
    assert_eq!(refusals.len(), 1, "{}", logs.contents());
    assert!(refusals[0].contains("`after_update_message` hook"), "{refusals:?}");
}

// ---------------------------------------------------------------------------------------------
// The bound is on nesting, not on how many writes one hook makes.

#[hook(after_create_message, id = "e8_many_after_create")]
async fn e8_many_after_create(state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
    if message.content.as_deref() != Some("fan out") {
        return Ok(());
    }
    for n in 0..(MAX_HOOK_DEPTH * 2) {
        state.inject_message(MessageRecord::new(Role::User, format!("note {n}"))).await?;
    }
    Ok(())
}

define_prompt! { name: e8_sequential_prompt, model: "scripted", prompt: "Echo." }
define_agent! {
    name: e8_sequential_agent,
    side_a: { prompt: e8_sequential_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [e8_many_after_create],
}

#[tokio::test(flavor = "current_thread")]
async fn e8_many_writes_from_one_hook_are_not_nesting() {
    let (logs, _guard) = capture_logs();
    let runtime = runtime_of("e8_sequential_agent", ScriptedModel::new([ScriptedResponse::text("ok")]));
    let thread = runtime.create_thread("e8_sequential_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("fan out").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);
    let notes = texts(&thread.messages().await.unwrap()).into_iter().filter(|text| text.starts_with("note ")).count();
    assert_eq!(notes, 2 * MAX_HOOK_DEPTH as usize);
    assert!(logs.lines_with("[Hooks] ✗").is_empty(), "{}", logs.contents());
}

// ---------------------------------------------------------------------------------------------
// A hook that calls `Thread` methods on a captured handle of its own thread.

static E8_HANDLES: Mutex<Option<HashMap<String, Thread>>> = Mutex::new(None);
static E8_HANDLE_RESULTS: Recorder<String> = Recorder::new();

fn handle_of(thread_id: &str) -> Option<Thread> {
    E8_HANDLES.lock().unwrap_or_else(PoisonError::into_inner).as_ref()?.get(thread_id).cloned()
}

#[hook(after_create_message, id = "e8_use_captured_handle")]
async fn e8_use_captured_handle(state: &ThreadState, message: &MessageRecord) {
    if message.content.as_deref() != Some("hello") {
        return;
    }
    let Some(thread) = handle_of(&state.thread_id) else { return };
    // Bounded here so that, without the fix, the test fails in seconds rather than waiting for
    // the hook timeout.
    let wait = Duration::from_secs(20);
    let injected = tokio::time::timeout(wait, thread.inject_message(MessageRecord::new(Role::User, "side note"))).await;
    let record = match injected {
        Ok(Ok(_)) => "inject: written".to_owned(),
        Ok(Err(error)) => format!("inject: {}", error.message()),
        Err(_) => "inject: still waiting".to_owned(),
    };
    E8_HANDLE_RESULTS.record(&state.thread_id, record);
    let sent = tokio::time::timeout(wait, thread.send("nested send")).await;
    E8_HANDLE_RESULTS.record(&state.thread_id, format!("send: {}", describe(sent)));
    let queued = tokio::time::timeout(wait, thread.run_queued()).await;
    E8_HANDLE_RESULTS.record(&state.thread_id, format!("run_queued: {}", describe(queued)));
    let spawned = tokio::time::timeout(wait, thread.spawn_subagent("helper")).await;
    E8_HANDLE_RESULTS.record(&state.thread_id, format!("spawn_subagent: {}", describe(spawned)));
    let update = MessageUpdate::new().with_content("edited");
    let updated = tokio::time::timeout(wait, thread.update_message(&message.id, update)).await;
    let record = match updated {
        Ok(Ok(_)) => "update: written".to_owned(),
        Ok(Err(error)) => format!("update: {}", error.message()),
        Err(_) => "update: still waiting".to_owned(),
    };
    E8_HANDLE_RESULTS.record(&state.thread_id, record);
}

fn describe<T>(result: Result<Result<T, RuntimeError>, tokio::time::error::Elapsed>) -> String {
    match result {
        Ok(Ok(_)) => "went through".to_owned(),
        Ok(Err(RuntimeError::HeldByCaller { method })) => format!("held by caller ({method})"),
        Ok(Err(error)) => error.to_string(),
        Err(_) => "still waiting".to_owned(),
    }
}

define_prompt! { name: e8_handle_prompt, model: "scripted", prompt: "Echo." }
define_agent! {
    name: e8_handle_agent,
    side_a: { prompt: e8_handle_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [e8_use_captured_handle],
}

#[tokio::test(flavor = "current_thread")]
async fn e8_thread_handle_used_from_its_own_hook_fails_at_once() {
    let runtime = Runtime::builder()
        .agent::<e8_handle_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("done")]))
        .hook_timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let thread = runtime.create_thread("e8_handle_agent", ThreadOptions::default()).await.unwrap();
    E8_HANDLES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(thread.id().to_owned(), thread.clone());

    // Calls that waited for the hook would wait for its 120 s timeout: the guard fails first.
    let outcome = tokio::time::timeout(Duration::from_secs(15), thread.send("hello"))
        .await
        .expect("the calls from the hook waited for it to end")
        .unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle);

    let results = E8_HANDLE_RESULTS.of(thread.id());
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(
        results[0].starts_with("inject: Thread::inject_message was called from inside a hook")
            && results[0].contains("state.inject_message"),
        "the error says why and what to use: {results:?}"
    );
    assert_eq!(
        results[1..4],
        [
            "send: held by caller (send)",
            "run_queued: held by caller (run_queued)",
            "spawn_subagent: held by caller (spawn_subagent)"
        ]
    );
    assert!(results[4].starts_with("update: Thread::update_message was called from inside a hook"), "{results:?}");
    let error = RuntimeError::HeldByCaller { method: "send" }.to_string();
    assert!(error.contains("it would wait for itself"), "{error}");

    // Outside the run the same handle works.
    thread.inject_message(MessageRecord::new(Role::User, "side note")).await.unwrap();
    assert_eq!(texts(&thread.messages().await.unwrap()), ["hello", "done", "side note"]);
}
