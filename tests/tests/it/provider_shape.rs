//! R9: every provider request is a valid sequence whatever hooks inject. Each assistant message
//! with tool calls is followed at once by one result per call, messages created while the calls
//! ran come after the results, `include_past_tools` drops whole pairs, and a prefilter that
//! splits a pair is repaired with a warning.
//!
//! The scripted model refuses an invalid sequence as a provider does (HTTP 400), so a run that
//! sent one ends `failed (model_error)`; every test here also checks the recorded requests with
//! [`ScriptedModel::check_messages`] directly.

use crate::support;

use hooks_runtime::model::{ModelRequest, ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{StopReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::{Runtime, ThreadOptions};
use serde_json::json;

fn get_user_input() -> FnTool {
    FnTool::new("get_user_input", "Asks the person.", |_args| async { HookToolResult::success("blue, please") })
}

/// The guide's `convert_user_input_tool`: the tool's answer becomes a user message.
#[hook(after_tool_call_success, id = "r9_convert_user_input_tool")]
async fn r9_convert_user_input_tool(
    state: &ThreadState,
    call: &HookToolCall,
    result: &HookToolResult,
) -> Option<HookToolResult> {
    if call.function.name == "get_user_input" {
        let text = result.result.clone().unwrap_or_default();
        let _ = state.inject_message(MessageRecord::new(Role::User, text)).await;
    }
    None
}

define_prompt! {
    name: r9_prompt,
    model: "scripted",
    prompt: "R9.",
    tools: ["get_user_input"],
    hooks: [r9_convert_user_input_tool],
}

define_prompt! {
    name: r9_past_tools_prompt,
    model: "scripted",
    prompt: "R9 with past tools.",
    tools: ["get_user_input"],
    include_past_tools: true,
    hooks: [r9_convert_user_input_tool],
}

define_agent! { name: r9_agent, side_a: { prompt: r9_prompt, stop_on_response: true }, side_b: { human: true } }
define_agent! {
    name: r9_past_tools_agent,
    side_a: { prompt: r9_past_tools_prompt, stop_on_response: true },
    side_b: { human: true },
}

fn two_calls_then_text() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_a", "get_user_input", "{}").then_tool_call("call_b", "get_user_input", "{}"),
        ScriptedResponse::text("Blue it is."),
    ]
}

fn runtime(model: &ScriptedModel) -> Runtime {
    Runtime::builder()
        .agent::<r9_agent>()
        .agent::<r9_past_tools_agent>()
        .model("scripted", model.clone())
        .tool(get_user_input())
        .build()
        .unwrap()
}

/// `role: content` for plain messages, `role(calls: ..)` and `tool(id)` for the exchange.
fn shape(request: &ModelRequest) -> Vec<String> {
    support::shape_with(request, |message| {
        format!("{}: {}", message.role, message.content.as_deref().unwrap_or_default())
    })
}

fn assert_all_valid(model: &ScriptedModel) {
    for (index, request) in model.requests().iter().enumerate() {
        if let Err(reason) = ScriptedModel::check_messages(&request.messages) {
            panic!("request {index} is invalid: {reason}\n{:#?}", shape(request));
        }
    }
}

#[tokio::test]
async fn r9_messages_injected_while_tools_ran_come_after_the_results() {
    let model = ScriptedModel::new(two_calls_then_text());
    let runtime = runtime(&model);
    let thread = runtime.create_thread("r9_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("Pick a colour.").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_eq!(outcome.reply.as_deref(), Some("Blue it is."));
    assert_all_valid(&model);
    assert_eq!(
        shape(&model.requests()[1]),
        [
            "system: R9.",
            "user: Pick a colour.",
            "assistant(calls: call_a,call_b)",
            "tool(call_a)",
            "tool(call_b)",
            "user: blue, please",
            "user: blue, please",
        ]
    );
    // The store keeps the order in which things happened: only the request is reordered.
    let stored: Vec<String> = thread.messages().await.unwrap().iter().map(|m| m.role.as_str().to_owned()).collect();
    assert_eq!(stored, ["user", "assistant", "user", "tool", "user", "tool", "assistant"]);
}

#[tokio::test]
async fn r9_include_past_tools_keeps_the_pair_together() {
    let model = ScriptedModel::new(two_calls_then_text());
    let runtime = runtime(&model);
    let thread = runtime.create_thread("r9_past_tools_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("Pick a colour.").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_all_valid(&model);
    assert_eq!(
        shape(&model.requests()[1])[2..],
        ["assistant(calls: call_a,call_b)", "tool(call_a)", "tool(call_b)", "user: blue, please", "user: blue, please"]
    );
}

#[tokio::test]
async fn r9_without_past_tools_a_past_pair_goes_whole_and_what_was_said_during_it_stays() {
    let mut script = two_calls_then_text();
    script.push(ScriptedResponse::text("Noted."));
    let model = ScriptedModel::new(script);
    let runtime = runtime(&model);
    let thread = runtime.create_thread("r9_agent", ThreadOptions::default()).await.unwrap();
    thread.send("Pick a colour.").await.unwrap().into_result().unwrap();
    let outcome = thread.send("And a size?").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_all_valid(&model);
    assert_eq!(
        shape(&model.requests()[2]),
        [
            "system: R9.",
            "user: Pick a colour.",
            "user: blue, please",
            "user: blue, please",
            "assistant: Blue it is.",
            "user: And a size?",
        ]
    );
}

/// Keeps the system message and the last two others: a cut between a call and its results.
#[hook(prefilter_llm_history, id = "r9_keep_last_two")]
fn r9_keep_last_two(_state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    let skip = messages.len().saturating_sub(2).max(1);
    messages[..1].iter().chain(&messages[skip..]).cloned().collect()
}

define_prompt! {
    name: r9_cut_prompt,
    model: "scripted",
    prompt: "R9 cut.",
    tools: ["get_user_input"],
    hooks: [r9_keep_last_two],
}

define_agent! { name: r9_cut_agent, side_a: { prompt: r9_cut_prompt, stop_on_response: true }, side_b: { human: true } }

#[test]
fn r9_a_prefilter_that_splits_a_pair_is_repaired_with_a_warning() {
    let (logs, _guard) = support::capture_logs();
    let model = ScriptedModel::new(two_calls_then_text());
    let runtime = Runtime::builder()
        .agent::<r9_cut_agent>()
        .model("scripted", model.clone())
        .tool(get_user_input())
        .build()
        .unwrap();
    let outcome = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
        let thread = runtime.create_thread("r9_cut_agent", ThreadOptions::default()).await.unwrap();
        thread.send("Pick a colour.").await.unwrap()
    });
    assert_eq!(outcome.status, ThreadStatus::Idle, "{outcome:?}");
    assert_all_valid(&model);
    // The prefilter kept `tool(call_a), tool(call_b)` without their call: both go.
    assert_eq!(shape(&model.requests()[1]), ["system: R9 cut."]);
    let warnings = logs.lines_with("prefilter_llm_history returned a history that providers reject");
    assert_eq!(warnings.len(), 1, "{}", logs.contents());
    assert!(warnings[0].contains("WARN") && warnings[0].contains("`call_a`, `call_b`"), "{}", warnings[0]);
    assert!(!warnings[0].contains("blue"), "no contents in the log: {}", warnings[0]);
}

#[tokio::test]
async fn r9_the_scripted_model_refuses_what_a_provider_refuses() {
    let call = |ids: &[&str]| {
        LlmMessage::new("assistant", "").with_tool_calls(json!(
            ids.iter()
                .map(|id| json!({"id": id, "type": "function", "function": {"name": "f", "arguments": "{}"}}))
                .collect::<Vec<_>>()
        ))
    };
    let result = |id: &str| LlmMessage::new("tool", "ok").with_tool_call_id(id);
    let user = LlmMessage::new("user", "hi");
    let system = LlmMessage::new("system", "s");
    let check = ScriptedModel::check_messages;

    assert!(check(&[system.clone(), user.clone(), call(&["a", "b"]), result("b"), result("a"), user.clone()]).is_ok());
    // The two orders a provider refuses: a tool result after a user message, and a user message
    // between a call and its result.
    let dropped_call = check(&[system.clone(), user.clone(), user.clone(), result("a"), result("b")]).unwrap_err();
    assert!(dropped_call.contains("message 3 is a tool result for call `a`"), "{dropped_call}");
    let interleaved = check(&[system.clone(), call(&["a"]), user.clone(), result("a")]).unwrap_err();
    assert!(interleaved.contains("message 1 calls tool `a` but message 2 is user"), "{interleaved}");
    assert!(check(&[call(&["a", "b"]), result("a")]).unwrap_err().contains("message 2 is the end"));
    assert!(check(&[call(&["a"]), result("a"), result("a")]).unwrap_err().contains("call `a`"));
    assert!(check(&[call(&["a", "b"]), result("a"), result("a")]).unwrap_err().contains("second tool result"));
    assert!(check(&[call(&["a"]), result("z")]).unwrap_err().contains("does not make"));
    assert!(check(&[call(&["a", "a"]), result("a"), result("a")]).unwrap_err().contains("two tool calls"));
    assert!(check(&[call(&[])]).unwrap_err().contains("non-empty array"));
    assert!(check(&[LlmMessage::new("robot", "x")]).unwrap_err().contains("unknown role `robot`"));

    let model = ScriptedModel::new([ScriptedResponse::text("never sent")]);
    let request = ModelRequest::new("scripted", vec![system, call(&["a"]), user], vec![]);
    let error = match hooks_runtime::model::Model::stream(&model, request.clone()).await {
        Err(error) => error,
        Ok(_) => panic!("an invalid request was answered"),
    };
    let provider = error.provider().expect("a provider error");
    assert_eq!(provider.status(), Some(400), "{error}");
    assert!(provider.message().contains("`a`"), "{}", provider.message());
    assert_eq!(model.requests().len(), 1, "the refused request is still recorded");
    assert_eq!(model.remaining(), 1, "and answers nothing");

    let lenient = ScriptedModel::new([ScriptedResponse::text("sent")]).accepting_invalid_requests();
    assert!(hooks_runtime::model::Model::stream(&lenient, request).await.is_ok());
}

#[tokio::test]
async fn r9_a_run_stopped_for_repeated_tool_errors_answers_every_call_it_did_not_run() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_a", "no_such_tool", "{}").then_tool_call("call_b", "no_such_tool", "{}"),
        ScriptedResponse::text("Sorry."),
    ]);
    let runtime = Runtime::builder()
        .agent::<r9_past_tools_agent>()
        .model("scripted", model.clone())
        .tool(get_user_input())
        .repeated_tool_error_limit(1)
        .build()
        .unwrap();
    let thread = runtime.create_thread("r9_past_tools_agent", ThreadOptions::default()).await.unwrap();
    // The first failure stops the turn: `call_b` never runs, and is answered so.
    let first = thread.send("Try it.").await.unwrap();
    assert_eq!(first.status, ThreadStatus::Stopped(StopReason::RepeatedToolError), "{first}");
    let second = thread.send("Again?").await.unwrap().into_result().unwrap();
    assert_eq!(second.reply.as_deref(), Some("Sorry."));
    assert_all_valid(&model);
    let sent = shape(&model.requests()[1]);
    assert_eq!(
        sent[..5],
        [
            "system: R9 with past tools.",
            "user: Try it.",
            "assistant(calls: call_a,call_b)",
            "tool(call_a)",
            "tool(call_b)"
        ]
    );
    assert_eq!(sent.last().map(String::as_str), Some("user: Again?"));
}

/// The guide's `limit_to_20_messages`, with a limit small enough to cut an exchange in half.
#[hook(filter_messages, id = "r9_limit_to_2_messages")]
fn r9_limit_to_2_messages(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let skip = messages.len().saturating_sub(2);
    messages.into_iter().skip(skip).collect()
}

define_prompt! {
    name: r9_limit_prompt,
    model: "scripted",
    prompt: "R9 limit.",
    tools: ["get_user_input"],
    include_past_tools: true,
    hooks: [r9_limit_to_2_messages],
}

define_agent! {
    name: r9_limit_agent,
    side_a: { prompt: r9_limit_prompt, stop_on_response: true },
    side_b: { human: true },
}

#[tokio::test]
async fn r9_a_history_filter_that_cuts_an_exchange_sends_no_half_of_it() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_a", "get_user_input", "{}").then_tool_call("call_b", "get_user_input", "{}"),
        ScriptedResponse::text("Done."),
    ]);
    let runtime = Runtime::builder()
        .agent::<r9_limit_agent>()
        .model("scripted", model.clone())
        .tool(get_user_input())
        .build()
        .unwrap();
    let thread = runtime.create_thread("r9_limit_agent", ThreadOptions::default()).await.unwrap();
    thread.send("Go.").await.unwrap().into_result().unwrap();
    assert_all_valid(&model);
    // The last two stored messages are `tool(call_a)` and `tool(call_b)`: without their call,
    // neither is sent.
    assert_eq!(shape(&model.requests()[1]), ["system: R9 limit."]);
}
