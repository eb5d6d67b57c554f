//! Conformance of hook context (C1, C2) and request context assembly (R1-R8), run end to end
//! through a runtime with a scripted model whose recorded requests prove what reached the
//! provider.
//!
//! Every test has its own hooks, prompts and agents; hooks record into statics keyed by thread
//! id, so tests running in parallel never see each other's records.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{StopReason, ThreadStatus};
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{ExecutionState, HookSource, Side};
use hooks_runtime::{Runtime, RuntimeError, ThreadOptions};
use serde_json::json;
use support::{Recorder, capture_logs, llm_lines, request_has, request_lines, texts};

fn ok_tool(name: &'static str) -> FnTool {
    FnTool::new(name, "Answers ok.", |_args| async { HookToolResult::success("ok") })
}

// ---------------------------------------------------------------------------------------------
// C1: every thread hook receives the ThreadState first and a HookExecutionContext last; the
// context parameter may be omitted.

static C1_SOURCES: Recorder<HookSource> = Recorder::new();
static C1_PLAIN_RUNS: Recorder<String> = Recorder::new();

#[hook(after_system_message, id = "c1_with_ctx")]
fn c1_with_ctx(state: &ThreadState, _system: &str, ctx: &HookExecutionContext) -> Option<String> {
    C1_SOURCES.record(&state.thread_id, ctx.source.clone());
    None
}

#[hook(after_system_message, id = "c1_without_ctx")]
fn c1_without_ctx(state: &ThreadState, system: &str) -> Option<String> {
    C1_PLAIN_RUNS.record(&state.thread_id, system.to_owned());
    None
}

define_prompt! {
    name: c1_prompt,
    model: "scripted",
    prompt: "C1 prompt.",
    hooks: [c1_with_ctx, c1_without_ctx],
}

define_prompt! { name: c1_plain_prompt, model: "scripted", prompt: "C1 plain." }

define_agent! {
    name: c1_prompt_agent,
    side_a: { prompt: c1_prompt, stop_on_response: true },
    side_b: { human: true },
}

define_agent! {
    name: c1_agent_agent,
    side_a: { prompt: c1_plain_prompt, stop_on_response: true },
    side_b: { human: true },
    hooks: [c1_with_ctx, c1_without_ctx],
}

define_agent! {
    name: c1_child,
    expose_as_tool: true,
    parent_hooks: [{ hook: c1_with_ctx, reason: "Records the provenance it runs with." }],
    side_a: { prompt: c1_plain_prompt },
    side_b: { human: true },
}

define_agent! {
    name: c1_parent,
    side_a: { prompt: c1_plain_prompt, stop_on_response: true, subagents: [{ agent: c1_child, as: helper }] },
    side_b: { human: true },
}

async fn c1_run(agent: &str) -> String {
    let runtime = Runtime::builder()
        .agent::<c1_prompt_agent>()
        .agent::<c1_agent_agent>()
        .agent::<c1_parent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("hi")]))
        .build()
        .expect("runtime");
    let thread = runtime.create_thread(agent, ThreadOptions::default()).await.expect("thread");
    let outcome = thread.send("hello").await.expect("run");
    assert_eq!(outcome.status, ThreadStatus::Idle);
    thread.id().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_hooks_with_and_without_context_both_run_with_prompt_source() {
    let thread = c1_run("c1_prompt_agent").await;
    assert_eq!(C1_SOURCES.of(&thread), [HookSource::Prompt { prompt_name: "c1_prompt".into() }]);
    assert_eq!(C1_PLAIN_RUNS.of(&thread), ["C1 prompt."], "the hook without a context parameter ran too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_agent_hook_receives_agent_source() {
    let thread = c1_run("c1_agent_agent").await;
    assert_eq!(C1_SOURCES.of(&thread), [HookSource::Agent { agent_name: "c1_agent_agent".into() }]);
    assert_eq!(C1_PLAIN_RUNS.of(&thread), ["C1 plain."]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c1_child_required_hook_receives_child_source() {
    let thread = c1_run("c1_parent").await;
    let sources = C1_SOURCES.of(&thread);
    assert_eq!(sources.len(), 1, "{sources:?}");
    let HookSource::Child { relationship_name, agent_name, package } = &sources[0] else {
        panic!("expected a child source, got {:?}", sources[0]);
    };
    assert_eq!(relationship_name, "helper");
    assert_eq!(agent_name, "c1_child");
    let package = package.as_ref().expect("the child's package");
    assert_eq!(package.name, env!("CARGO_PKG_NAME"));
    assert!(C1_PLAIN_RUNS.of(&thread).is_empty());
}

// ---------------------------------------------------------------------------------------------
// C2: during execution `state.execution` carries flow id, current side, step count, stopped flag
// and abort signal.

static C2_SEEN: Recorder<Option<ExecutionState>> = Recorder::new();
static C2_ABORT_SEEN: Recorder<bool> = Recorder::new();

#[hook(filter_messages, id = "c2_observe")]
fn c2_observe(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    C2_SEEN.record(&state.thread_id, state.execution.clone());
    messages
}

#[hook(tool_call_done, id = "c2_abort_observe")]
fn c2_abort_observe(state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {
    let aborted = state.execution.as_ref().is_some_and(|execution| execution.abort_signal.is_aborted());
    C2_ABORT_SEEN.record(&state.thread_id, aborted);
}

define_prompt! {
    name: c2_prompt,
    model: "scripted",
    prompt: "C2.",
    tools: ["c2_tool"],
    hooks: [c2_observe],
}

define_agent! {
    name: c2_agent,
    side_a: { prompt: c2_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

define_agent! {
    name: c2_side_b_agent,
    side_a: { human: true },
    side_b: { prompt: c2_prompt, stop_on_response: true },
}

define_prompt! {
    name: c2_abort_prompt,
    model: "scripted",
    prompt: "C2 abort.",
    tools: ["c2_slow_tool"],
    hooks: [c2_observe, c2_abort_observe],
}

define_agent! {
    name: c2_abort_agent,
    side_a: { prompt: c2_abort_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_execution_present_with_flow_id_side_step_count_and_stopped() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "c2_tool", "{}"),
        ScriptedResponse::text("first"),
        ScriptedResponse::text("second"),
    ]);
    let runtime =
        Runtime::builder().agent::<c2_agent>().model("scripted", model).tool(ok_tool("c2_tool")).build().unwrap();
    let thread = runtime.create_thread("c2_agent", ThreadOptions::default()).await.unwrap();
    assert_eq!(thread.send("one").await.unwrap().steps, 2);
    assert_eq!(thread.send("two").await.unwrap().steps, 1);

    let seen: Vec<ExecutionState> =
        C2_SEEN.of(thread.id()).into_iter().map(|e| e.expect("state.execution is present in hooks")).collect();
    assert_eq!(seen.len(), 3);
    assert!(!seen[0].flow_id.is_empty());
    assert_eq!(seen[0].flow_id, seen[1].flow_id, "one flow id within a run");
    assert_ne!(seen[1].flow_id, seen[2].flow_id, "a new flow id for a new run");
    assert_eq!(seen.iter().map(|e| e.step_count).collect::<Vec<_>>(), [1, 2, 1], "step count per model step");
    assert!(seen.iter().all(|e| e.current_side == Side::A));
    assert!(seen.iter().all(|e| !e.stopped));
    assert!(seen.iter().all(|e| !e.abort_signal.is_aborted()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c2_current_side_is_the_responding_side_b() {
    let model = ScriptedModel::new([ScriptedResponse::text("from b")]);
    let runtime = Runtime::builder()
        .agent::<c2_side_b_agent>()
        .model("scripted", model)
        .tool(ok_tool("c2_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("c2_side_b_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();
    let seen = C2_SEEN.of(thread.id());
    assert_eq!(seen.len(), 1);
    let execution = seen[0].as_ref().expect("state.execution is present");
    assert_eq!(execution.current_side, Side::B);
    assert_eq!(execution.step_count, 1);
}

// Paused time: the tool's 300 ms of work is a timer of tokio's clock.
#[tokio::test(start_paused = true)]
async fn c2_abort_signal_stops_the_run_before_its_next_step() {
    let started = Arc::new(tokio::sync::Notify::new());
    let tool_started = started.clone();
    let slow = FnTool::new("c2_slow_tool", "Takes its time.", move |_args| {
        let started = tool_started.clone();
        async move {
            started.notify_one();
            tokio::time::sleep(Duration::from_millis(300)).await;
            HookToolResult::success("slow ok")
        }
    });
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_1", "c2_slow_tool", "{}"),
        ScriptedResponse::text("never requested"),
    ]);
    let runtime =
        Runtime::builder().agent::<c2_abort_agent>().model("scripted", model.clone()).tool(slow).build().unwrap();
    let thread = runtime.create_thread("c2_abort_agent", ThreadOptions::default()).await.unwrap();

    let running = thread.clone();
    let run = tokio::spawn(async move { running.send("go").await });
    tokio::time::timeout(Duration::from_secs(5), started.notified()).await.expect("the tool started");
    assert_eq!(thread.status(), ThreadStatus::Running);
    thread.abort();
    let outcome = tokio::time::timeout(Duration::from_secs(5), run).await.expect("run ends").unwrap().unwrap();

    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    assert_eq!(thread.status(), ThreadStatus::Stopped(StopReason::Aborted));
    assert_eq!(model.requests().len(), 1, "no model step after the abort");
    assert_eq!(model.remaining(), 1);
    assert_eq!(C2_ABORT_SEEN.of(thread.id()), [true], "the hook's abort signal is the one thread.abort() fires");
    let seen = C2_SEEN.of(thread.id());
    assert_eq!(seen.len(), 1);
    // The signal a hook holds in `state.execution` is shared with the run: it has fired too.
    assert!(seen[0].as_ref().unwrap().abort_signal.is_aborted());
}

// ---------------------------------------------------------------------------------------------
// R1: after_system_message after interpolation; a string replaces, None leaves it.

static R1_SEEN: Recorder<(&'static str, String)> = Recorder::new();

#[hook(after_system_message, id = "r1_append")]
fn r1_append(state: &ThreadState, system: &str) -> Option<String> {
    R1_SEEN.record(&state.thread_id, ("append", system.to_owned()));
    Some(format!("{system} [r1 appended]"))
}

#[hook(after_system_message, id = "r1_none")]
fn r1_none(state: &ThreadState, system: &str) -> Option<String> {
    R1_SEEN.record(&state.thread_id, ("none", system.to_owned()));
    None
}

define_prompt! {
    name: r1_replace_prompt,
    model: "scripted",
    prompt: "You help {{name}} today.",
    hooks: [r1_append, r1_none],
}

define_prompt! {
    name: r1_keep_prompt,
    model: "scripted",
    prompt: "You help {{name}} today.",
    hooks: [r1_none],
}

define_agent! { name: r1_replace_agent, side_a: { prompt: r1_replace_prompt, stop_on_response: true }, side_b: { human: true } }
define_agent! { name: r1_keep_agent, side_a: { prompt: r1_keep_prompt, stop_on_response: true }, side_b: { human: true } }

async fn r1_run(agent: &str) -> (String, ScriptedModel) {
    let model = ScriptedModel::new([ScriptedResponse::text("hi")]);
    let runtime = Runtime::builder()
        .agent::<r1_replace_agent>()
        .agent::<r1_keep_agent>()
        .model("scripted", model.clone())
        .build()
        .unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::new().argument("name", "Ada")).await.unwrap();
    thread.send("hello").await.unwrap();
    (thread.id().to_owned(), model)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r1_after_system_message_sees_interpolated_prompt_and_a_string_replaces_it() {
    let (thread, model) = r1_run("r1_replace_agent").await;
    assert_eq!(
        R1_SEEN.of(&thread),
        [("append", "You help Ada today.".to_owned()), ("none", "You help Ada today. [r1 appended]".to_owned())]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].messages[0].role, "system");
    assert_eq!(requests[0].messages[0].content.as_deref(), Some("You help Ada today. [r1 appended]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r1_none_leaves_the_system_message_unchanged() {
    let (thread, model) = r1_run("r1_keep_agent").await;
    assert_eq!(R1_SEEN.of(&thread), [("none", "You help Ada today.".to_owned())]);
    let requests = model.requests();
    assert_eq!(requests[0].messages[0].role, "system");
    assert_eq!(requests[0].messages[0].content.as_deref(), Some("You help Ada today."));
}

// ---------------------------------------------------------------------------------------------
// R2: a message injected from after_system_message is persisted before the snapshot, is part of
// the current assembly and passes through filter_messages.

static R2_INJECTED: Recorder<bool> = Recorder::new();
static R2_FILTER_INPUT: Recorder<Vec<String>> = Recorder::new();

#[hook(after_system_message, id = "r2_inject")]
async fn r2_inject(state: &ThreadState, _system: &str) -> Option<String> {
    let result = state.inject_message(MessageRecord::new(Role::User, "r2 injected")).await;
    R2_INJECTED.record(&state.thread_id, result.is_ok());
    None
}

#[hook(filter_messages, id = "r2_filter_observe")]
fn r2_filter_observe(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    R2_FILTER_INPUT.record(&state.thread_id, texts(&messages));
    // Drops the injected message from the request only if it is renamed here: proves the
    // injected message goes through this hook.
    messages
        .into_iter()
        .map(|mut message| {
            if message.content.as_deref() == Some("r2 injected") {
                message.content = Some("r2 injected (filtered)".into());
            }
            message
        })
        .collect()
}

define_prompt! {
    name: r2_prompt,
    model: "scripted",
    prompt: "R2.",
    hooks: [r2_inject, r2_filter_observe],
}

define_agent! { name: r2_agent, side_a: { prompt: r2_prompt, stop_on_response: true }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r2_after_system_message_injection_is_stored_before_the_snapshot_and_filtered() {
    let model = ScriptedModel::new([ScriptedResponse::text("hi")]);
    let runtime = Runtime::builder().agent::<r2_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("r2_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();

    assert_eq!(R2_INJECTED.of(thread.id()), [true]);
    assert_eq!(R2_FILTER_INPUT.of(thread.id()), [vec!["hello".to_owned(), "r2 injected".to_owned()]]);
    let requests = model.requests();
    assert_eq!(
        request_lines(&requests[0]),
        [
            ("system".to_owned(), "R2.".to_owned()),
            ("user".to_owned(), "hello".to_owned()),
            ("user".to_owned(), "r2 injected (filtered)".to_owned()),
        ]
    );
    assert_eq!(texts(&thread.messages().await.unwrap()), ["hello", "r2 injected", "hi"]);
}

// ---------------------------------------------------------------------------------------------
// R3: filter_messages runs exactly once per assembly on a stable snapshot including silent
// messages, even when it injects.

static R3_INPUTS: Recorder<Vec<(String, bool)>> = Recorder::new();

#[hook(filter_messages, id = "r3_filter_injects")]
async fn r3_filter_injects(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    R3_INPUTS.record(&state.thread_id, messages.iter().map(|m| (support::text(m).to_owned(), m.is_silent())).collect());
    let call = R3_INPUTS.of(&state.thread_id).len();
    let _ = state.inject_message(MessageRecord::new(Role::User, format!("r3 injected {call}"))).await;
    messages
}

define_prompt! {
    name: r3_prompt,
    model: "scripted",
    prompt: "R3.",
    tools: ["r3_tool"],
    hooks: [r3_filter_injects],
}

define_agent! { name: r3_agent, side_a: { prompt: r3_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r3_filter_messages_runs_exactly_once_per_assembly_while_it_injects() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "r3_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = Runtime::builder()
        .agent::<r3_agent>()
        .model("scripted", model.clone())
        .tool(ok_tool("r3_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("r3_agent", ThreadOptions::default()).await.unwrap();
    let mut quiet = MessageRecord::new(Role::User, "quiet note");
    quiet.silent = Some(true);
    thread.inject_message(quiet).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.steps, 2);

    let inputs = R3_INPUTS.of(thread.id());
    assert_eq!(model.requests().len(), 2);
    assert_eq!(inputs.len(), 2, "exactly one filter_messages run per assembly: {inputs:?}");
    // The snapshot includes the silent message and is stable: the message injected by this very
    // run of the hook is not in it.
    assert_eq!(inputs[0], [("quiet note".to_owned(), true), ("hello".to_owned(), false)]);
    let second: Vec<&str> = inputs[1].iter().map(|(text, _)| text.as_str()).collect();
    assert!(second.contains(&"r3 injected 1"), "{second:?}");
    assert!(!second.contains(&"r3 injected 2"), "{second:?}");
    assert!(request_has(&model.requests()[0], "quiet note"), "silent messages reach the request unless removed");
}

// ---------------------------------------------------------------------------------------------
// R4: what filter_messages returns is the input of provider transformation, never the live
// history.

static R4_INPUTS: Recorder<Vec<String>> = Recorder::new();

#[hook(filter_messages, id = "r4_filter_rewrites")]
fn r4_filter_rewrites(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    R4_INPUTS.record(&state.thread_id, texts(&messages));
    let mut out: Vec<HookMessage> = messages
        .into_iter()
        .map(|mut message| {
            if message.content.as_deref() == Some("hello") {
                message.content = Some("hello (changed)".into());
            }
            message
        })
        .collect();
    out.push(HookMessage::new("r4_synthetic", Role::User, "r4 synthetic", 0));
    out
}

define_prompt! {
    name: r4_prompt,
    model: "scripted",
    prompt: "R4.",
    tools: ["r4_tool"],
    hooks: [r4_filter_rewrites],
}

define_agent! { name: r4_agent, side_a: { prompt: r4_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r4_filter_result_reaches_the_provider_but_never_the_store() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "r4_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = Runtime::builder()
        .agent::<r4_agent>()
        .model("scripted", model.clone())
        .tool(ok_tool("r4_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("r4_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert!(request_has(request, "r4 synthetic"), "{:?}", request_lines(request));
        assert!(request_has(request, "hello (changed)"));
        assert!(!request_has(request, "hello"));
    }
    let stored = thread.messages().await.unwrap();
    assert!(!stored.iter().any(|m| m.id == "r4_synthetic" || support::text(m) == "r4 synthetic"));
    assert_eq!(support::text(&stored[0]), "hello", "the stored message is unchanged");
    // The next snapshot is the live history again, not the previous filter result.
    let inputs = R4_INPUTS.of(thread.id());
    assert_eq!(inputs.len(), 2);
    assert_eq!(inputs[1][0], "hello");
    assert!(!inputs[1].iter().any(|text| text.contains("r4 synthetic") || text.contains("(changed)")));
}

// ---------------------------------------------------------------------------------------------
// R5: prefilter_llm_history runs after transformation; its result is the request; stored history
// is unchanged.

static R5_IN: Recorder<Vec<(String, String)>> = Recorder::new();
static R5_OUT: Recorder<Vec<LlmMessage>> = Recorder::new();

#[hook(filter_messages, id = "r5_filter_adds")]
fn r5_filter_adds(_state: &ThreadState, mut messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.push(MessageRecord::new(Role::Assistant, "r5 from filter").into_message());
    messages
}

#[hook(prefilter_llm_history, id = "r5_prefilter_rewrites")]
fn r5_prefilter_rewrites(state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    R5_IN.record(&state.thread_id, llm_lines(&messages));
    let mut out: Vec<LlmMessage> = messages
        .into_iter()
        .map(|mut message| {
            if message.content.as_deref() == Some("hello") {
                message.content = Some("hello (be concise)".into());
            }
            message
        })
        .collect();
    out.push(LlmMessage::new("user", "r5 extra"));
    R5_OUT.record(&state.thread_id, out.clone());
    out
}

define_prompt! {
    name: r5_prompt,
    model: "scripted",
    prompt: "R5 system.",
    hooks: [r5_filter_adds, r5_prefilter_rewrites],
}

define_agent! { name: r5_agent, side_a: { prompt: r5_prompt, stop_on_response: true }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r5_prefilter_sees_provider_messages_and_its_result_is_the_request() {
    let model = ScriptedModel::new([ScriptedResponse::text("hi")]);
    let runtime = Runtime::builder().agent::<r5_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("r5_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();

    let input = R5_IN.of(thread.id());
    assert_eq!(input.len(), 1);
    assert_eq!(
        input[0],
        [
            ("system".to_owned(), "R5 system.".to_owned()),
            ("user".to_owned(), "hello".to_owned()),
            ("assistant".to_owned(), "r5 from filter".to_owned()),
        ],
        "prefilter runs on the transformed result of filter_messages"
    );
    let output = R5_OUT.of(thread.id());
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].messages, output[0], "the prefilter result is the provider request history");
    let stored = texts(&thread.messages().await.unwrap());
    assert_eq!(stored, ["hello", "hi"], "stored history unchanged");
}

// ---------------------------------------------------------------------------------------------
// R6: a message injected from filter_messages or prefilter_llm_history does not restart assembly
// and is eligible for the next one.

static R6_FILTER_CALLS: Recorder<()> = Recorder::new();
static R6_PREFILTER_CALLS: Recorder<()> = Recorder::new();

#[hook(filter_messages, id = "r6_filter_injects")]
async fn r6_filter_injects(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    R6_FILTER_CALLS.record(&state.thread_id, ());
    if R6_FILTER_CALLS.of(&state.thread_id).len() == 1 {
        let _ = state.inject_message(MessageRecord::new(Role::User, "r6 from filter")).await;
    }
    messages
}

#[hook(prefilter_llm_history, id = "r6_prefilter_injects")]
async fn r6_prefilter_injects(state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    R6_PREFILTER_CALLS.record(&state.thread_id, ());
    if R6_PREFILTER_CALLS.of(&state.thread_id).len() == 1 {
        let _ = state.inject_message(MessageRecord::new(Role::User, "r6 from prefilter")).await;
    }
    messages
}

define_prompt! {
    name: r6_prompt,
    model: "scripted",
    prompt: "R6.",
    tools: ["r6_tool"],
    hooks: [r6_filter_injects, r6_prefilter_injects],
}

define_agent! { name: r6_agent, side_a: { prompt: r6_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r6_injection_from_filter_or_prefilter_is_stored_and_only_in_the_next_request() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "r6_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = Runtime::builder()
        .agent::<r6_agent>()
        .model("scripted", model.clone())
        .tool(ok_tool("r6_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread("r6_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();

    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(R6_FILTER_CALLS.of(thread.id()).len(), 2, "no restart of the assembly");
    assert_eq!(R6_PREFILTER_CALLS.of(thread.id()).len(), 2, "no restart of the assembly");
    assert!(!request_has(&requests[0], "r6 from filter"), "{:?}", request_lines(&requests[0]));
    assert!(!request_has(&requests[0], "r6 from prefilter"), "{:?}", request_lines(&requests[0]));
    assert!(request_has(&requests[1], "r6 from filter"), "{:?}", request_lines(&requests[1]));
    assert!(request_has(&requests[1], "r6 from prefilter"), "{:?}", request_lines(&requests[1]));
    let stored = texts(&thread.messages().await.unwrap());
    assert!(stored.contains(&"r6 from filter".to_owned()), "{stored:?}");
    assert!(stored.contains(&"r6 from prefilter".to_owned()), "{stored:?}");
}

// ---------------------------------------------------------------------------------------------
// R7: a blocking prefilter error stores its message and stops with hook_blocked; the provider
// request does not run. A non-blocking error keeps the last good value.

static R7_AFTER_FAIL: Recorder<Vec<(String, String)>> = Recorder::new();

#[hook(prefilter_llm_history, id = "r7_gate")]
fn r7_gate(_state: &ThreadState, _messages: Vec<LlmMessage>) -> Result<Vec<LlmMessage>, HookError> {
    Err(HookError::block("Refused by the moderation gate."))
}

#[hook(prefilter_llm_history, id = "r7_add_note")]
fn r7_add_note(_state: &ThreadState, mut messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    messages.push(LlmMessage::new("user", "r7 good note"));
    messages
}

#[hook(prefilter_llm_history, id = "r7_fail")]
fn r7_fail(_state: &ThreadState, _messages: Vec<LlmMessage>) -> Result<Vec<LlmMessage>, HookError> {
    Err(HookError::new("moderation service unreachable"))
}

#[hook(prefilter_llm_history, id = "r7_after_fail")]
fn r7_after_fail(state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    R7_AFTER_FAIL.record(&state.thread_id, llm_lines(&messages));
    messages
}

define_prompt! { name: r7_block_prompt, model: "scripted", prompt: "R7.", hooks: [r7_gate] }
define_prompt! { name: r7_soft_prompt, model: "scripted", prompt: "R7.", hooks: [r7_add_note, r7_fail, r7_after_fail] }
define_agent! { name: r7_block_agent, side_a: { prompt: r7_block_prompt, stop_on_response: true }, side_b: { human: true } }
define_agent! { name: r7_soft_agent, side_a: { prompt: r7_soft_prompt, stop_on_response: true }, side_b: { human: true } }

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_blocking_prefilter_error_stores_message_stops_hook_blocked_and_sends_nothing() {
    let model = ScriptedModel::new([ScriptedResponse::text("must not be requested")]);
    let runtime = Runtime::builder().agent::<r7_block_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("r7_block_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::HookBlocked));
    assert_eq!(thread.status(), ThreadStatus::Stopped(StopReason::HookBlocked));
    assert!(model.requests().is_empty(), "the provider request does not run");
    let stored = thread.messages().await.unwrap();
    assert_eq!(stored.len(), 2, "{:?}", texts(&stored));
    assert_eq!(stored[1].role, Role::Assistant);
    assert_eq!(support::text(&stored[1]), "Refused by the moderation gate.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_non_blocking_prefilter_error_keeps_last_good_value_and_the_request_runs() {
    let model = ScriptedModel::new([ScriptedResponse::text("hi")]);
    let runtime = Runtime::builder().agent::<r7_soft_agent>().model("scripted", model.clone()).build().unwrap();
    let thread = runtime.create_thread("r7_soft_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Idle);
    assert_eq!(outcome.reply.as_deref(), Some("hi"));
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "the request runs");
    let expected = [
        ("system".to_owned(), "R7.".to_owned()),
        ("user".to_owned(), "hello".to_owned()),
        ("user".to_owned(), "r7 good note".to_owned()),
    ];
    assert_eq!(request_lines(&requests[0]), expected);
    assert_eq!(R7_AFTER_FAIL.of(thread.id()), [expected.to_vec()], "the chain goes on with the last good value");
    assert_eq!(texts(&thread.messages().await.unwrap()), ["hello", "hi"]);
}

// ---------------------------------------------------------------------------------------------
// R8: inject_message applies before_create_message and after_create_message on every path.

static R8_BEFORE: Recorder<String> = Recorder::new();
static R8_AFTER: Recorder<String> = Recorder::new();

#[hook(before_create_message, id = "r8_tag")]
fn r8_tag(state: &ThreadState, mut message: MessageRecord) -> MessageRecord {
    R8_BEFORE.record(&state.thread_id, message.content.clone().unwrap_or_default());
    message.extra.insert("r8_tag".into(), json!(true));
    message
}

#[hook(after_create_message, id = "r8_after")]
fn r8_after(state: &ThreadState, message: &MessageRecord) {
    R8_AFTER.record(&state.thread_id, message.content.clone().unwrap_or_default());
}

#[hook(after_system_message, id = "r8_inject_system")]
async fn r8_inject_system(state: &ThreadState, _system: &str) -> Option<String> {
    let _ = state.inject_message(MessageRecord::new(Role::User, "r8 from after_system_message")).await;
    None
}

#[hook(filter_messages, id = "r8_inject_filter")]
async fn r8_inject_filter(state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let _ = state.inject_message(MessageRecord::new(Role::User, "r8 from filter_messages")).await;
    messages
}

#[hook(prefilter_llm_history, id = "r8_inject_prefilter")]
async fn r8_inject_prefilter(state: &ThreadState, messages: Vec<LlmMessage>) -> Vec<LlmMessage> {
    let _ = state.inject_message(MessageRecord::new(Role::User, "r8 from prefilter_llm_history")).await;
    messages
}

#[hook(tool_call_done, id = "r8_inject_tool_done")]
async fn r8_inject_tool_done(state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {
    let _ = state.inject_message(MessageRecord::new(Role::User, "r8 from tool_call_done")).await;
}

define_prompt! { name: r8_prompt, model: "scripted", prompt: "R8.", tools: ["r8_tool"] }

// The prompt lists no hooks, so the agent's list applies during execution and at rest alike.
define_agent! {
    name: r8_agent,
    side_a: { prompt: r8_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
    hooks: [r8_tag, r8_after, r8_inject_system, r8_inject_filter, r8_inject_prefilter, r8_inject_tool_done],
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r8_inject_message_runs_create_hooks_on_every_path() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_1", "r8_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime =
        Runtime::builder().agent::<r8_agent>().model("scripted", model).tool(ok_tool("r8_tool")).build().unwrap();
    let thread = runtime.create_thread("r8_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();
    thread.inject_message(MessageRecord::new(Role::User, "r8 at rest")).await.unwrap();

    let before = R8_BEFORE.of(thread.id());
    let after = R8_AFTER.of(thread.id());
    let stored = thread.messages().await.unwrap();
    for injected in [
        "r8 from after_system_message",
        "r8 from filter_messages",
        "r8 from prefilter_llm_history",
        "r8 from tool_call_done",
        "r8 at rest",
    ] {
        assert!(before.iter().any(|seen| seen == injected), "before_create_message saw `{injected}`: {before:?}");
        assert!(after.iter().any(|seen| seen == injected), "after_create_message saw `{injected}`: {after:?}");
        let message = stored.iter().find(|m| support::text(m) == injected).expect("stored");
        assert_eq!(message.extra.get("r8_tag"), Some(&json!(true)), "stored as before_create_message returned it");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r8_counts_each_injection_exactly_once_in_each_create_hook() {
    let model = ScriptedModel::new([ScriptedResponse::text("done")]);
    let runtime =
        Runtime::builder().agent::<r8_agent>().model("scripted", model).tool(ok_tool("r8_tool")).build().unwrap();
    let thread = runtime.create_thread("r8_agent", ThreadOptions::default()).await.unwrap();
    thread.send("hello").await.unwrap();
    let count = |seen: &[String], text: &str| seen.iter().filter(|s| *s == text).count();
    let before = R8_BEFORE.of(thread.id());
    let after = R8_AFTER.of(thread.id());
    for injected in ["r8 from after_system_message", "r8 from filter_messages", "r8 from prefilter_llm_history"] {
        assert_eq!(count(&before, injected), 1, "{before:?}");
        assert_eq!(count(&after, injected), 1, "{after:?}");
    }
    // user message, three injections, assistant reply.
    assert_eq!(before.len(), 5, "{before:?}");
    assert_eq!(after.len(), 5, "{after:?}");
}

// ---------------------------------------------------------------------------------------------
// R1: every placeholder of the agent's prompts needs its argument; `create_thread` refuses a
// thread without one, and a request that still sends one unfilled (a subagent's, whose thread
// has no arguments) warns.

define_prompt! { name: r1_greeting_prompt, model: "scripted", prompt: "You help {{customer}} with order {{ order }}." }
define_prompt! { name: r1_review_prompt, model: "scripted", prompt: "Review the answers for {{reviewer}}." }
define_agent! {
    name: r1_placeholder_agent,
    expose_as_tool: true,
    side_a: { prompt: r1_greeting_prompt, stop_on_response: true },
    side_b: { prompt: r1_review_prompt, stop_on_response: true },
}
define_agent! {
    name: r1_parent_agent,
    side_a: { prompt: r1_keep_prompt, stop_on_response: true, subagents: [{ agent: r1_placeholder_agent, as: helper }] },
    side_b: { human: true },
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r1_a_placeholder_without_its_argument_refuses_the_thread_and_names_prompt_and_argument() {
    let model = ScriptedModel::new([ScriptedResponse::text("hi")]);
    let runtime = Runtime::builder().agent::<r1_placeholder_agent>().model("scripted", model.clone()).build().unwrap();
    let error = runtime.create_thread("r1_placeholder_agent", ThreadOptions::new()).await.unwrap_err();
    assert!(
        matches!(&error, RuntimeError::MissingArgument { prompt: "r1_greeting_prompt", argument, .. } if argument == "customer"),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "prompt `r1_greeting_prompt` of agent `r1_placeholder_agent` uses `{{customer}}`, but the thread has no \
         argument `customer`; pass it with `ThreadOptions::new().argument(\"customer\", ..)`"
    );
    assert_eq!(format!("{error:?}"), error.to_string(), "a `main` returning it prints the sentence");
    // Side B's prompt is checked too, and a trimmed name is the name.
    let partial = ThreadOptions::new().argument("customer", "Bob").argument("order", 7);
    let error = runtime.create_thread("r1_placeholder_agent", partial.clone()).await.unwrap_err();
    assert!(
        matches!(&error, RuntimeError::MissingArgument { prompt: "r1_review_prompt", argument, .. } if argument == "reviewer")
    );
    // With every argument (an argument's text is not scanned again: braces in it are sent as is).
    let thread = runtime.create_thread("r1_placeholder_agent", partial.argument("reviewer", "{{x}}")).await.unwrap();
    thread.send("hello").await.unwrap();
    assert_eq!(model.requests()[0].messages[0].content.as_deref(), Some("You help Bob with order 7."));
}

#[tokio::test(flavor = "current_thread")]
async fn r1_a_subagent_prompt_sent_with_a_placeholder_warns_with_prompt_and_name() {
    let (logs, _guard) = capture_logs();
    let model = ScriptedModel::new([ScriptedResponse::text("child reply")]);
    let runtime = Runtime::builder().agent::<r1_parent_agent>().model("scripted", model.clone()).build().unwrap();
    let parent = runtime.create_thread("r1_parent_agent", ThreadOptions::new().argument("name", "Ada")).await.unwrap();
    let child = parent.spawn_subagent("helper").await.expect("a subagent's thread has no arguments to check");
    child.send("hello").await.unwrap();
    let warnings = logs.lines_with("r1_greeting_prompt");
    assert_eq!(warnings.len(), 1, "one warning per request: {}", logs.contents());
    assert!(warnings[0].contains("WARN") && warnings[0].contains("`customer`, `order`"), "{warnings:?}");
    assert_eq!(
        model.requests()[0].messages[0].content.as_deref(),
        Some("You help {{customer}} with order {{ order }}.")
    );
}

// ---------------------------------------------------------------------------------------------
// R9: a filter_messages chain that splits a tool call from its result gets neither sent, and
// the runtime warns with the chain's hook ids and the call ids; `keep_last_messages` cuts
// between exchanges.

#[hook(filter_messages, id = "r9_naive_last_message")]
fn r9_naive_last_message(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    let skip = messages.len().saturating_sub(1);
    messages.drain(..skip);
}

#[hook(filter_messages, id = "r9_whole_last_two")]
fn r9_whole_last_two(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    keep_last_messages(messages, 2);
}

define_prompt! { name: r9_naive_prompt, model: "scripted", prompt: "R9.", tools: ["r9_tool"], hooks: [r9_naive_last_message] }
define_prompt! { name: r9_whole_prompt, model: "scripted", prompt: "R9.", tools: ["r9_tool"], hooks: [r9_whole_last_two] }
define_agent! { name: r9_naive_agent, side_a: { prompt: r9_naive_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }
define_agent! { name: r9_whole_agent, side_a: { prompt: r9_whole_prompt, stop_on_response: true, max_steps: 4 }, side_b: { human: true } }

async fn r9_run(agent: &str) -> ScriptedModel {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_r9", "r9_tool", "{}"), ScriptedResponse::text("done")]);
    let runtime = Runtime::builder()
        .agent::<r9_naive_agent>()
        .agent::<r9_whole_agent>()
        .model("scripted", model.clone())
        .tool(ok_tool("r9_tool"))
        .build()
        .unwrap();
    let thread = runtime.create_thread(agent, ThreadOptions::new()).await.unwrap();
    thread.send("hello").await.unwrap();
    model
}

#[tokio::test(flavor = "current_thread")]
async fn r9_a_filter_that_splits_an_exchange_warns_with_its_hook_ids_and_the_call_ids() {
    let (logs, _guard) = capture_logs();
    let model = r9_run("r9_naive_agent").await;
    let warnings = logs.lines_with("split tool exchanges");
    assert_eq!(warnings.len(), 1, "once, for the one assembly that split: {}", logs.contents());
    assert!(
        warnings[0].contains("WARN")
            && warnings[0].contains("`r9_naive_last_message`")
            && warnings[0].contains("`call_r9`"),
        "{warnings:?}"
    );
    // The orphaned result was not sent: the second request is the system message alone.
    assert_eq!(request_lines(&model.requests()[1]), [("system".to_owned(), "R9.".to_owned())]);
}

#[tokio::test(flavor = "current_thread")]
async fn r9_keep_last_messages_keeps_the_exchange_whole_and_nothing_warns() {
    let (logs, _guard) = capture_logs();
    let model = r9_run("r9_whole_agent").await;
    assert!(logs.lines_with("split tool exchanges").is_empty(), "{}", logs.contents());
    let second = &model.requests()[1];
    assert_eq!(second.messages.len(), 3, "system, the call and its result: {:?}", request_lines(second));
    assert_eq!(second.messages[2].tool_call_id.as_deref(), Some("call_r9"));
}
