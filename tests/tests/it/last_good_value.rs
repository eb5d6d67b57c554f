//! E1, E3, E4, E6 and E7: which value a transform chain goes on with when a hook fails.
//!
//! A by-value hook is all-or-nothing: when it returns an error, panics or times out, the chain
//! goes on with exactly the value just before it (never an older one), whatever hooks ran
//! before. An in-place hook leaves the value as it left it, as the reference implementation's
//! hooks do with the array they are given.

use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

use crate::support_tools;
use support_tools::LogCapture;

fn marker(text: &str) -> HookMessage {
    MessageRecord::new(Role::User, text).into_message()
}

// By value.

#[hook(filter_messages, id = "add_a")]
fn add_a(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("a"));
    messages
}

#[hook(filter_messages, id = "add_b")]
fn add_b(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("b"));
    messages
}

#[hook(filter_messages, id = "add_c_then_fail")]
fn add_c_then_fail(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Result<Vec<HookMessage>, HookError> {
    messages.push(marker("c"));
    Err(HookError::new("refused"))
}

#[hook(filter_messages, id = "add_d_then_panic")]
fn add_d_then_panic(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("d"));
    panic!("a bug in a sync hook");
}

#[hook(filter_messages, id = "add_e_too_slowly", timeout_ms = 50)]
async fn add_e_too_slowly(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("e"));
    tokio::time::sleep(Duration::from_secs(5)).await;
    messages
}

/// Blocks its thread past its timeout without ever yielding, then answers.
#[hook(filter_messages, id = "add_late_after_blocking", timeout_ms = 50)]
async fn add_late_after_blocking(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    std::thread::sleep(Duration::from_millis(300));
    messages.push(marker("late"));
    messages
}

/// Redacts in place: the earlier hook whose work a later failure must not undo.
#[hook(filter_messages, id = "redact_question")]
fn redact_question(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    for message in &mut messages {
        if message.content.as_deref() == Some("question") {
            message.content = Some("[redacted]".into());
        }
    }
    messages
}

// In place.

#[hook(filter_messages, id = "push_f_then_fail")]
fn push_f_then_fail(_state: &ThreadState, messages: &mut Vec<HookMessage>) -> Result<(), HookError> {
    messages.push(marker("f"));
    Err(HookError::new("refused"))
}

#[hook(filter_messages, id = "push_g_then_panic")]
fn push_g_then_panic(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    messages.push(marker("g"));
    panic!("a bug in an in-place hook");
}

#[hook(filter_messages, id = "push_h_too_slowly", timeout_ms = 50)]
async fn push_h_too_slowly(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    messages.push(marker("h"));
    tokio::time::sleep(Duration::from_secs(5)).await;
    messages.push(marker("never"));
}

#[hook(filter_messages, id = "push_i")]
async fn push_i(_state: &ThreadState, messages: &mut Vec<HookMessage>, _ctx: &HookExecutionContext) {
    tokio::task::yield_now().await;
    messages.push(marker("i"));
}

#[hook(filter_messages, id = "push_j")]
fn push_j(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    messages.push(marker("j"));
}

#[hook(filter_messages, id = "push_k")]
fn push_k(_state: &ThreadState, messages: &mut Vec<HookMessage>) -> Result<(), HookError> {
    messages.push(marker("k"));
    Ok(())
}

/// Takes 200 ms of its thread: time that belongs to it, not to the hooks after it.
#[hook(filter_messages, id = "sync_takes_its_time")]
fn sync_takes_its_time(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    std::thread::sleep(Duration::from_millis(200));
}

#[hook(filter_messages, id = "async_takes_its_time", timeout_ms = 5000)]
async fn async_takes_its_time(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// Quick, under a short timeout; by value, so a (wrong) timeout would discard its answer.
#[hook(filter_messages, id = "push_quick", timeout_ms = 50)]
async fn push_quick(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("quick"));
    messages
}

#[hook(filter_messages, id = "push_quick_again", timeout_ms = 50)]
async fn push_quick_again(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("quick"));
    messages
}

macro_rules! chain_agent {
    ($agent:ident, $prompt:ident, [$($hook:ident),*]) => {
        define_prompt! { name: $prompt, model: "scripted", prompt: "p", hooks: [$($hook),*] }
        define_agent! { name: $agent, side_a: { prompt: $prompt, stop_on_response: true } }
    };
}

chain_agent!(fallible_agent, fallible_prompt, [add_a, add_c_then_fail, add_b]);
chain_agent!(panic_agent, panic_prompt, [add_a, add_d_then_panic, add_b]);
chain_agent!(mixed_agent, mixed_prompt, [add_c_then_fail, add_a, add_d_then_panic, add_b]);
chain_agent!(timeout_agent, timeout_prompt, [add_a, add_e_too_slowly, add_b]);
chain_agent!(blocking_agent, blocking_prompt, [add_a, add_late_after_blocking, add_b]);
chain_agent!(redaction_agent, redaction_prompt, [redact_question, add_d_then_panic, add_b]);
chain_agent!(in_place_fail_agent, in_place_fail_prompt, [add_a, push_f_then_fail, add_b]);
chain_agent!(in_place_panic_agent, in_place_panic_prompt, [add_a, push_g_then_panic, push_i, add_b]);
chain_agent!(in_place_timeout_agent, in_place_timeout_prompt, [add_a, push_h_too_slowly, add_b]);
chain_agent!(charged_agent, charged_prompt, [async_takes_its_time, sync_takes_its_time, push_quick, push_quick_again]);
// Every hook a plain in-place sync hook: the chain the runtime runs as a typed table.
chain_agent!(plain_agent, plain_prompt, [push_j, push_f_then_fail, push_g_then_panic, push_k]);
chain_agent!(forms_agent, forms_prompt, [push_i, add_c_then_fail, push_f_then_fail, add_d_then_panic, add_b]);

/// The contents of the request the model received, after the system message.
async fn request_contents(agent: &str) -> Vec<String> {
    request_contents_and_failures(agent).await.0
}

/// The request's contents and the `[Hooks] ✗` lines logged meanwhile. Every test captures logs:
/// `tracing` caches whether a log site is wanted, and a test thread without a subscriber running
/// beside one with a subscriber can leave a site switched off for both.
async fn request_contents_and_failures(agent: &str) -> (Vec<String>, Vec<String>) {
    let logs = LogCapture::start();
    let contents = request_contents_of(agent).await;
    (contents, logs.failure_lines())
}

async fn request_contents_of(agent: &str) -> Vec<String> {
    let model = ScriptedModel::new([ScriptedResponse::text("ok")]);
    let runtime = Runtime::builder()
        .agent::<fallible_agent>()
        .agent::<panic_agent>()
        .agent::<mixed_agent>()
        .agent::<timeout_agent>()
        .agent::<blocking_agent>()
        .agent::<redaction_agent>()
        .agent::<in_place_fail_agent>()
        .agent::<in_place_panic_agent>()
        .agent::<in_place_timeout_agent>()
        .agent::<forms_agent>()
        .agent::<plain_agent>()
        .agent::<charged_agent>()
        .model("scripted", model.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    thread.send("question").await.unwrap();
    let request = model.requests().into_iter().next().expect("the model was called");
    request.messages.into_iter().skip(1).map(|m| m.content.unwrap_or_default()).collect()
}

#[tokio::test]
async fn e1_failing_by_value_hook_goes_on_with_the_value_before_it() {
    assert_eq!(request_contents("fallible_agent").await, ["question", "a", "b"]);
}

#[tokio::test]
async fn e7_panicking_by_value_hook_restores_the_value_just_before_it() {
    // Not the chain's start value: add_a's work survives the panic of the hook after it.
    assert_eq!(request_contents("panic_agent").await, ["question", "a", "b"]);
}

#[tokio::test]
async fn e7_a_panic_never_undoes_an_earlier_redaction() {
    assert_eq!(request_contents("redaction_agent").await, ["[redacted]", "b"]);
}

#[tokio::test]
async fn e7_each_failure_restores_the_value_just_before_that_hook() {
    // add_c_then_fail fails (back to ["question"]), add_a runs, add_d panics (back to its input).
    assert_eq!(request_contents("mixed_agent").await, ["question", "a", "b"]);
}

// Paused time: the hook's 5 s sleep and its 50 ms deadline are timers of tokio's clock, which
// jumps to the deadline. A hook not cut off would answer with its `e`.
#[tokio::test(start_paused = true)]
async fn e3_timed_out_by_value_async_hook_goes_on_with_the_value_before_it() {
    assert_eq!(request_contents("timeout_agent").await, ["question", "a", "b"]);
}

#[tokio::test]
async fn e6_an_answer_after_the_deadline_is_discarded_even_without_yielding() {
    let (contents, failures) = request_contents_and_failures("blocking_agent").await;
    assert_eq!(contents, ["question", "a", "b"]);
    assert!(
        failures.iter().any(|line| line.contains("add_late_after_blocking") && line.contains("timed out after 50 ms")),
        "the blocking hook is logged as timed out: {failures:#?}"
    );
}

#[tokio::test]
async fn e7_failing_in_place_hook_leaves_the_value_as_it_left_it() {
    assert_eq!(request_contents("in_place_fail_agent").await, ["question", "a", "f", "b"]);
}

#[tokio::test]
async fn e7_panicking_in_place_hook_leaves_the_value_as_it_left_it() {
    assert_eq!(request_contents("in_place_panic_agent").await, ["question", "a", "g", "i", "b"]);
}

// Paused time: the hook's 5 s sleep and its 50 ms deadline are timers of tokio's clock, which
// jumps to the deadline. A hook not cut off would push its `never` after the sleep.
#[tokio::test(start_paused = true)]
async fn e7_timed_out_in_place_hook_leaves_the_value_as_it_left_it() {
    assert_eq!(request_contents("in_place_timeout_agent").await, ["question", "a", "h", "b"]);
}

#[tokio::test]
async fn e7_a_chain_of_plain_in_place_hooks_goes_on_past_each_failure_and_logs_it_by_id() {
    // Events only: with hook spans wanted, dispatch would take its traced path instead.
    let logs = LogCapture::events_only();
    let contents = request_contents_of("plain_agent").await;
    let failures = logs.failure_lines();
    assert_eq!(contents, ["question", "j", "f", "g", "k"]);
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(failures[0].contains("`push_f_then_fail`") && failures[0].contains("refused"), "{failures:#?}");
    assert!(failures[1].contains("`push_g_then_panic`") && failures[1].contains("panicked"), "{failures:#?}");
}

#[tokio::test]
async fn e7_both_forms_in_one_chain_each_keep_their_rule() {
    // push_i (in place, async) runs; add_c fails by value (back to [q, i]); push_f fails in place
    // (keeps f); add_d panics by value (back to [q, i, f]); add_b runs.
    assert_eq!(request_contents("forms_agent").await, ["question", "i", "f", "b"]);
}

#[tokio::test]
async fn e6_a_hook_is_timed_from_its_own_start_not_the_hook_before_it() {
    // The quick hooks come after 400 ms of other hooks, eight times their own timeout; the first
    // follows a sync hook that ran after an async one, whose end reading it must not reuse.
    // With hook spans (a subscriber listens); `hook_clock.rs` runs the same without.
    let (contents, failures) = request_contents_and_failures("charged_agent").await;
    assert_eq!(contents, ["question", "quick", "quick"]);
    assert!(failures.is_empty(), "no hook timed out: {failures:#?}");
}
