//! The declarative tool-call hook registry on the real runtime (CONFORMANCE Y3, Y5, Y11, Y13):
//! PRE_TOOL_USE / POST_TOOL_USE / ON_ERROR around a thread's real tool calls, nothing for a
//! call the agent's authorization check denies, and `apply_to` replacing an agent's listener.

use crate::support_tools;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hooks_runtime::declarative::{
    DeclarativeHookRegistry, HookAction, HookConfig, HookContext, HookEvent, HookExecutor, HookMatcher, executor_fn,
};
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_runtime::tool::{ToolCallListener, ToolCallListenerTarget, ToolCallOutcome};
use hooks_runtime::{Runtime, ThreadOptions};
use support_tools::{lock, tool_message};

type Log = Arc<Mutex<Vec<String>>>;

/// One hook per event; the action's message names the event, the recorder adds the context.
fn registry_of(events: &[HookEvent]) -> DeclarativeHookRegistry {
    DeclarativeHookRegistry::of(events.iter().map(|event| {
        let name = match event {
            HookEvent::PreToolUse => "pre",
            HookEvent::PostToolUse => "post",
            HookEvent::OnError => "error",
            HookEvent::OnStart => "start",
            HookEvent::OnStop => "stop",
            other => panic!("no test hook for the event {other}"),
        };
        HookConfig::new(*event, None, HookAction::log(name))
    }))
}

fn describe(action: &HookAction, context: &HookContext) -> String {
    let get = |key: &str| context.get(key).cloned().unwrap_or_else(|| "-".to_owned());
    match action.template() {
        "start" => format!("start:{}", get("agent")),
        "pre" => format!("pre:{}:{}", get("tool"), get("event")),
        "post" => format!("post:{}:{}:{}", get("tool"), get("event"), get("success")),
        "error" => format!("error:{}:{}:{}", get("tool"), get("success"), get("error")),
        other => format!("{other}:{context:?}"),
    }
}

fn recording(registry: DeclarativeHookRegistry, log: &Log) -> DeclarativeHookRegistry {
    let log = log.clone();
    registry.with_executor(executor_fn(move |action, context| lock(&log).push(describe(action, context))))
}

fn recording_tool(name: &'static str, log: &Log, result: HookToolResult) -> FnTool {
    let log = log.clone();
    FnTool::new(name, "Records that it ran.", move |_| {
        let log = log.clone();
        let result = result.clone();
        async move {
            lock(&log).push(format!("tool:{name}"));
            result
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Y5 (and Y3 on real calls): a denied call fires nothing, allowed calls fire PRE/POST/ON_ERROR.

define_prompt! {
    name: y5_prompt,
    model: "scripted",
    prompt: "Y5.",
    tools: ["y5_denied", "y5_allowed", "y5_failing"],
}

define_agent! {
    name: y5_agent,
    side_a: { prompt: y5_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn y5_denied_tool_call_fires_no_declarative_hook_while_allowed_calls_do() {
    let log: Log = Arc::default();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_denied", "y5_denied", "{}")
            .then_tool_call("call_allowed", "y5_allowed", "{}")
            .then_tool_call("call_failing", "y5_failing", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let runtime = Runtime::builder()
        .agent::<y5_agent>()
        .model("scripted", model)
        .tool(recording_tool("y5_denied", &log, HookToolResult::success("should not run")))
        .tool(recording_tool("y5_allowed", &log, HookToolResult::success("ok")))
        .tool(recording_tool("y5_failing", &log, HookToolResult::error("broken")))
        .authorize_tools(|_state, call| {
            if call.function.name == "y5_denied" { ToolDecision::deny("not authorized") } else { ToolDecision::allow() }
        })
        .build()
        .unwrap();
    let registry = recording(
        registry_of(&[HookEvent::OnStart, HookEvent::PreToolUse, HookEvent::PostToolUse, HookEvent::OnError]),
        &log,
    );
    registry.apply_to(&runtime.agent("y5_agent").unwrap()).await;
    let thread = runtime.create_thread("y5_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    assert_eq!(
        *lock(&log),
        [
            "start:y5_agent",
            "pre:y5_allowed:preToolUse",
            "tool:y5_allowed",
            "post:y5_allowed:postToolUse:true",
            "pre:y5_failing:preToolUse",
            "tool:y5_failing",
            "post:y5_failing:postToolUse:false",
            "error:y5_failing:false:broken",
        ],
        "nothing at all for the denied call; PRE before, POST after, ON_ERROR after a failure"
    );
    let denied = tool_message(&thread, "call_denied").await;
    assert_eq!(denied.extra_str("tool_status"), Some("error"));
    assert!(denied.content.as_deref().unwrap().contains("not authorized"), "{denied:?}");
}

// ---------------------------------------------------------------------------------------------
// Y3, Y11 on a real thread: PRE_TOOL_USE finishes before the tool starts; POST_TOOL_USE carries
// the real latency; matchers select the tool.

/// An executor that takes its time, to show the tool waits for PRE_TOOL_USE.
struct SlowRecorder(Log);

#[hooks_runtime::async_trait]
impl HookExecutor for SlowRecorder {
    async fn execute(&self, action: &HookAction, context: &HookContext) {
        lock(&self.0).push(format!("begin:{}", action.template()));
        tokio::time::sleep(Duration::from_millis(40)).await;
        let latency = context.get("latencyMs").map(|ms| ms.parse::<u64>().unwrap());
        lock(&self.0).push(match latency {
            Some(ms) => format!("end:{}:{}:latency>=30:{}", action.template(), describe(action, context), ms >= 30),
            None => format!("end:{}:{}", action.template(), describe(action, context)),
        });
    }
}

define_prompt! {
    name: y3_prompt,
    model: "scripted",
    prompt: "Y3.",
    tools: ["y3_file_read", "y3_search"],
}

define_agent! {
    name: y3_agent,
    side_a: { prompt: y3_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

#[tokio::test]
async fn y3_y11_declarative_hooks_fire_around_real_tool_calls_of_a_thread() {
    let log: Log = Arc::default();
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_read", "y3_file_read", "{}").then_tool_call("call_search", "y3_search", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let slow_tool = {
        let log = log.clone();
        FnTool::new("y3_file_read", "Reads slowly.", move |_| {
            let log = log.clone();
            async move {
                lock(&log).push("tool:y3_file_read".to_owned());
                tokio::time::sleep(Duration::from_millis(30)).await;
                HookToolResult::success("contents")
            }
        })
    };
    let runtime = Runtime::builder()
        .agent::<y3_agent>()
        .model("scripted", model)
        .tool(slow_tool)
        .tool(recording_tool("y3_search", &log, HookToolResult::success("found")))
        .build()
        .unwrap();
    let registry = DeclarativeHookRegistry::of([
        HookConfig::new(HookEvent::PreToolUse, Some(HookMatcher::new("Y3_FILE_*")), HookAction::log("pre")),
        HookConfig::new(HookEvent::PostToolUse, Some(HookMatcher::new("y3_file_*")), HookAction::log("post")),
    ])
    .with_executor(SlowRecorder(log.clone()));
    registry.apply_to(&runtime.agent("y3_agent").unwrap()).await;
    let thread = runtime.create_thread("y3_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    assert_eq!(
        *lock(&log),
        [
            "begin:pre",
            "end:pre:pre:y3_file_read:preToolUse",
            "tool:y3_file_read",
            "begin:post",
            "end:post:post:y3_file_read:postToolUse:true:latency>=30:true",
            "tool:y3_search",
        ],
        "PRE finished before the tool, POST after it with its latency; the matcher left y3_search out"
    );
}

// ---------------------------------------------------------------------------------------------
// Y13: apply_to replaces the agent's one listener; an empty registry sets none and fires no
// ON_START; one registry serves several agents.

define_prompt! {
    name: y13_prompt,
    model: "scripted",
    prompt: "Y13.",
    tools: ["y13_tool"],
}

define_agent! {
    name: y13_agent,
    side_a: { prompt: y13_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

define_agent! {
    name: y13_other_agent,
    side_a: { prompt: y13_prompt, stop_on_response: true, max_steps: 4 },
    side_b: { human: true },
}

/// A listener set by hand, to see whether `apply_to` replaced it.
struct HandListener(Log);

#[hooks_runtime::async_trait]
impl ToolCallListener for HandListener {
    async fn before_tool_call(&self, tool: &str) {
        lock(&self.0).push(format!("hand:before:{tool}"));
    }

    async fn after_tool_call(&self, tool: &str, outcome: &ToolCallOutcome) {
        lock(&self.0).push(format!("hand:after:{tool}:{}", outcome.success));
    }
}

fn y13_turn(n: usize) -> [ScriptedResponse; 2] {
    [ScriptedResponse::tool_call(&format!("call_{n}"), "y13_tool", "{}"), ScriptedResponse::text("done")]
}

#[tokio::test]
async fn y13_apply_to_replaces_the_listener_and_an_empty_registry_sets_none() {
    let (hand, first, second, empty): (Log, Log, Log, Log) = Default::default();
    let model = ScriptedModel::default();
    let runtime = Runtime::builder()
        .agent::<y13_agent>()
        .agent::<y13_other_agent>()
        .model("scripted", model.clone())
        .tool(FnTool::new("y13_tool", "Works.", |_| async { HookToolResult::success("ok") }))
        .build()
        .unwrap();
    let agent = runtime.agent("y13_agent").unwrap();
    let other = runtime.agent("y13_other_agent").unwrap();
    let thread = runtime.create_thread("y13_agent", ThreadOptions::default()).await.unwrap();
    let events = [HookEvent::OnStart, HookEvent::PreToolUse, HookEvent::PostToolUse];

    // A registry replaces a listener set by hand.
    agent.set_tool_call_listener(Some(Arc::new(HandListener(hand.clone()))));
    model.push_all(y13_turn(1));
    thread.send("one").await.unwrap();
    assert_eq!(*lock(&hand), ["hand:before:y13_tool", "hand:after:y13_tool:true"]);
    let first_registry = recording(registry_of(&events), &first);
    first_registry.apply_to(&agent).await;
    model.push_all(y13_turn(2));
    thread.send("two").await.unwrap();
    assert_eq!(lock(&hand).len(), 2, "the hand-set listener was replaced");
    assert_eq!(*lock(&first), ["start:y13_agent", "pre:y13_tool:preToolUse", "post:y13_tool:postToolUse:true"]);

    // A second registry replaces the first.
    let second_registry = recording(registry_of(&events), &second);
    second_registry.apply_to(&agent).await;
    model.push_all(y13_turn(3));
    thread.send("three").await.unwrap();
    assert_eq!(lock(&first).len(), 3, "the first registry no longer listens");
    assert_eq!(*lock(&second), ["start:y13_agent", "pre:y13_tool:preToolUse", "post:y13_tool:postToolUse:true"]);

    // An empty registry sets no listener and fires no ON_START: the second one stays.
    let empty_registry = recording(DeclarativeHookRegistry::default(), &empty);
    assert!(empty_registry.is_empty());
    empty_registry.apply_to(&agent).await;
    model.push_all(y13_turn(4));
    thread.send("four").await.unwrap();
    assert!(lock(&empty).is_empty());
    let seen = lock(&second).clone();
    assert_eq!(seen.len(), 5, "still the second registry: {seen:?}");

    // One registry serves several agents; ON_START fires once per apply_to.
    second_registry.apply_to(&other).await;
    let other_thread = runtime.create_thread("y13_other_agent", ThreadOptions::default()).await.unwrap();
    model.push_all(y13_turn(5));
    other_thread.send("five").await.unwrap();
    assert_eq!(
        lock(&second)[5..],
        ["start:y13_other_agent", "pre:y13_tool:preToolUse", "post:y13_tool:postToolUse:true"]
    );
    assert_eq!(lock(&hand).len(), 2);
    assert_eq!(lock(&first).len(), 3);
}
