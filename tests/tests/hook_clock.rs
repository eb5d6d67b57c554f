//! E6 on dispatch's fast path (no log subscriber in this binary, so no hook span is built): an
//! async hook is timed from its own start. One clock reading ends an async hook and starts the
//! next, but never across another hook that ran in between.

use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

fn marker(text: &str) -> HookMessage {
    MessageRecord::new(Role::User, text).into_message()
}

#[hook(filter_messages, id = "async_takes_its_time", timeout_ms = 5000)]
async fn async_takes_its_time(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    tokio::time::sleep(Duration::from_millis(200)).await;
}

#[hook(filter_messages, id = "sync_takes_its_time")]
fn sync_takes_its_time(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    std::thread::sleep(Duration::from_millis(200));
}

/// By value, so a wrong timeout would discard its answer.
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

#[hook(filter_messages, id = "push_late", timeout_ms = 50)]
async fn push_late(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    std::thread::sleep(Duration::from_millis(200));
    messages.push(marker("late"));
    messages
}

define_prompt! {
    name: charged_prompt,
    model: "scripted",
    prompt: "p",
    hooks: [async_takes_its_time, sync_takes_its_time, push_quick, push_quick_again, push_late],
}
define_agent! { name: charged_agent, side_a: { prompt: charged_prompt, stop_on_response: true } }

/// The contents of the model's first request (the system prompt left out) after one send.
async fn request_contents<A: Agent>(agent: &str) -> Vec<String> {
    let model = ScriptedModel::new([ScriptedResponse::text("ok")]);
    let runtime = Runtime::builder().agent::<A>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    thread.send("question").await.unwrap();
    let request = model.requests().into_iter().next().unwrap();
    request.messages.into_iter().skip(1).map(|m| m.content.unwrap_or_default()).collect()
}

#[tokio::test]
async fn e6_a_hook_is_timed_from_its_own_start_on_the_fast_path() {
    // The quick hooks follow 400 ms of other hooks and keep their answers; the one that blocks
    // past its own timeout loses its answer.
    assert_eq!(request_contents::<charged_agent>("charged_agent").await, ["question", "quick", "quick"]);
}

// The same with timeouts long enough (200 ms and more) for dispatch to time the hooks with the
// coarse monotonic clock on Linux: deadlines are still judged per hook, from its own start.

#[hook(filter_messages, id = "sync_takes_longer")]
fn sync_takes_longer(_state: &ThreadState, _messages: &mut Vec<HookMessage>) {
    std::thread::sleep(Duration::from_millis(450));
}

#[hook(filter_messages, id = "push_quick_coarse", timeout_ms = 300)]
async fn push_quick_coarse(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(marker("quick"));
    messages
}

#[hook(filter_messages, id = "push_late_coarse", timeout_ms = 300)]
async fn push_late_coarse(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    std::thread::sleep(Duration::from_millis(500));
    messages.push(marker("late"));
    messages
}

define_prompt! {
    name: coarse_prompt,
    model: "scripted",
    prompt: "p",
    hooks: [async_takes_its_time, sync_takes_longer, push_quick_coarse, push_late_coarse],
}
define_agent! { name: coarse_agent, side_a: { prompt: coarse_prompt, stop_on_response: true } }

#[tokio::test]
async fn e6_long_timeouts_are_judged_per_hook_on_the_coarse_clock_too() {
    // The quick hook follows 650 ms of other hooks, more than its 300 ms, and keeps its answer;
    // the one that blocks 500 ms without yielding loses its answer.
    assert_eq!(request_contents::<coarse_agent>("coarse_agent").await, ["question", "quick"]);
}
