//! E1 and E4 on chains that move their value: which value the chain goes on with when a hook
//! fails. A hook that can fail by design (returns a `Result`, or is async and can time out) gets
//! a copy of its input kept: the chain goes on with exactly the value before it. A sync hook that
//! returns a plain value can fail only by panicking; the chain then goes on with the newest copy
//! it holds (the value before the last hook that could fail, or the value it started with).

use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

fn marker(text: &str) -> HookMessage {
    MessageRecord::new(Role::User, text).into_message()
}

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

define_prompt! { name: fallible_prompt, model: "scripted", prompt: "p", hooks: [add_a, add_c_then_fail, add_b] }
define_prompt! { name: panic_prompt, model: "scripted", prompt: "p", hooks: [add_a, add_d_then_panic, add_b] }
define_prompt! { name: mixed_prompt, model: "scripted", prompt: "p", hooks: [add_c_then_fail, add_a, add_d_then_panic, add_b] }
define_prompt! { name: timeout_prompt, model: "scripted", prompt: "p", hooks: [add_a, add_e_too_slowly, add_b] }

define_agent! { name: fallible_agent, side_a: { prompt: fallible_prompt, stop_on_response: true } }
define_agent! { name: panic_agent, side_a: { prompt: panic_prompt, stop_on_response: true } }
define_agent! { name: mixed_agent, side_a: { prompt: mixed_prompt, stop_on_response: true } }
define_agent! { name: timeout_agent, side_a: { prompt: timeout_prompt, stop_on_response: true } }

/// The contents of the request the model received, after the system message.
async fn request_contents(agent: &str) -> Vec<String> {
    let model = ScriptedModel::new([ScriptedResponse::text("ok")]);
    let runtime = Runtime::builder()
        .agent::<fallible_agent>()
        .agent::<panic_agent>()
        .agent::<mixed_agent>()
        .agent::<timeout_agent>()
        .model("scripted", model.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.unwrap();
    thread.send("question").await.unwrap();
    let request = model.requests().into_iter().next().expect("the model was called");
    request.messages.into_iter().skip(1).map(|m| m.content.unwrap_or_default()).collect()
}

#[tokio::test]
async fn e1_failing_fallible_hook_goes_on_with_the_value_before_it() {
    assert_eq!(request_contents("fallible_agent").await, ["question", "a", "b"]);
}

#[tokio::test]
async fn e4_panicking_plain_sync_hook_goes_on_with_the_chain_start_value() {
    // No hook before the panicking one can fail, so the newest copy is the chain's start value.
    assert_eq!(request_contents("panic_agent").await, ["question", "b"]);
}

#[tokio::test]
async fn e4_panic_after_a_fallible_hook_goes_on_with_the_value_before_that_hook() {
    // add_c_then_fail fails (copy: ["question"]), add_a runs, add_d panics: back to the copy.
    assert_eq!(request_contents("mixed_agent").await, ["question", "b"]);
}

#[tokio::test]
async fn e3_timed_out_async_hook_goes_on_with_the_value_before_it() {
    let started = std::time::Instant::now();
    assert_eq!(request_contents("timeout_agent").await, ["question", "a", "b"]);
    assert!(started.elapsed() < Duration::from_secs(4), "the slow hook was cut off");
}
