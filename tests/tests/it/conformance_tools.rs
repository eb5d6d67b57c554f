//! Tool calls (CONFORMANCE T1-T7) against the real runtime: `tool_call_started` timing with and
//! without a progress argument, `tool_call_done`, the success/failure chains,
//! `before_store_tool_result`, and the thread events subscribers receive.
//!
//! Tests run in parallel threads of one process, so each test has its own hooks, prompt, agent,
//! tools and statics.

use crate::support_store;
use crate::support_tools;

use std::sync::{Mutex, OnceLock};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::resolution::ActiveContext;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::{Attachment, AttachmentRef, MessageQuery, Side};
use hooks_runtime::{ThreadEvent, ThreadOptions};
use serde_json::json;
use support_tools::{drain, fragments, lock, tool_events, tool_message};

/// One clause's fixture: a prompt on the scripted model offering `tools`, with `hooks`, and an
/// agent whose side A answers with it (at most 4 steps) and whose side B is a person.
macro_rules! clause_agent {
    (
        agent: $agent:ident,
        prompt: $prompt:ident,
        text: $text:literal,
        tools: [$($tool:literal),* $(,)?],
        $(hooks: [$($hook:ident),* $(,)?],)?
        $(agent_hooks: [$($agent_hook:ident),* $(,)?],)?
    ) => {
        define_prompt! {
            name: $prompt,
            model: "scripted",
            prompt: $text,
            tools: [$($tool),*],
            $(hooks: [$($hook),*],)?
        }

        define_agent! {
            name: $agent,
            side_a: { prompt: $prompt, stop_on_response: true, max_steps: 4 },
            side_b: { human: true },
            $(hooks: [$($agent_hook),*],)?
        }
    };
}

// ---------------------------------------------------------------------------------------------
// T1: once per call, before the tool runs, return value ignored.

static T1_STARTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Per tool run: the `n` argument and the call ids whose `tool_call_started` had run by then.
static T1_TOOL_SAW: Mutex<Vec<(u64, Vec<String>)>> = Mutex::new(Vec::new());

#[hook(tool_call_started, id = "t1_record_started")]
fn t1_record_started(_state: &ThreadState, call: &HookToolCall, _progress: Option<&str>) -> Result<(), HookError> {
    lock(&T1_STARTED).push(call.id.clone());
    // An observer's return value is ignored: not even an error changes the call.
    Err(HookError::new("ignored"))
}

clause_agent! {
    agent: t1_agent,
    prompt: t1_prompt,
    text: "T1.",
    tools: ["t1_count"],
    hooks: [t1_record_started],
}

#[tokio::test]
async fn t1_tool_call_started_runs_once_per_call_before_the_tool() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_a", "t1_count", r#"{"n":1}"#).then_tool_call(
            "call_b",
            "t1_count",
            r#"{"n":2}"#,
        ),
        ScriptedResponse::text("done"),
    ]);
    let runtime = support_store::builder()
        .await
        .agent::<t1_agent>()
        .model("scripted", model.clone())
        .tool(FnTool::new("t1_count", "Counts.", |args| async move {
            let n = args["n"].as_u64().unwrap_or_default();
            let started = lock(&T1_STARTED).clone();
            lock(&T1_TOOL_SAW).push((n, started));
            HookToolResult::success(format!("ran {n}"))
        }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("t1_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("count twice").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("done"));

    assert_eq!(*lock(&T1_STARTED), ["call_a", "call_b"], "exactly once per call, in stream order");
    let saw = lock(&T1_TOOL_SAW).clone();
    assert_eq!(saw.len(), 2, "both tools ran: {saw:?}");
    for (n, started) in &saw {
        let id = if *n == 1 { "call_a" } else { "call_b" };
        assert!(started.iter().any(|started| started == id), "tool {n} ran before tool_call_started of {id}");
    }
    // The hook's error return changed nothing: both calls ran and stored their results.
    assert_eq!(tool_message(&thread, "call_a").await.content.as_deref(), Some("ran 1"));
    assert_eq!(tool_message(&thread, "call_b").await.content.as_deref(), Some("ran 2"));
}

// ---------------------------------------------------------------------------------------------
// T2: no progress argument: as soon as the call appears, empty arguments, no progress.

static T2_MODEL: OnceLock<ScriptedModel> = OnceLock::new();
/// (delivered events, arguments, progress, id, name) at each run of the hook.
type StartedSeen = (usize, String, Option<String>, String, String);
static T2_SEEN: Mutex<Vec<StartedSeen>> = Mutex::new(Vec::new());
static T2_TOOL_ARGS: Mutex<Vec<serde_json::Value>> = Mutex::new(Vec::new());

#[hook(tool_call_started, id = "t2_record_started")]
fn t2_record_started(_state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    let delivered = T2_MODEL.get().expect("model set").delivered_events();
    lock(&T2_SEEN).push((
        delivered,
        call.function.arguments.clone(),
        progress.map(str::to_owned),
        call.id.clone(),
        call.function.name.clone(),
    ));
}

clause_agent! {
    agent: t2_agent,
    prompt: t2_prompt,
    text: "T2.",
    tools: ["t2_list"],
    hooks: [t2_record_started],
}

#[tokio::test]
async fn t2_without_progress_argument_runs_when_the_call_appears() {
    let response = ScriptedResponse::text("Looking.").then_tool_call_in_fragments(
        "call_t2",
        "t2_list",
        &fragments(&[r#"{"dir""#, r#":"sr"#, r#"c"}"#]),
    );
    let start = response
        .events()
        .iter()
        .position(|event| matches!(event, hooks_runtime::model::ModelEvent::ToolCallStart { .. }))
        .unwrap();
    assert_eq!(start, 1, "the text delta comes first");
    let model = T2_MODEL.get_or_init(|| ScriptedModel::new([response, ScriptedResponse::text("listed")])).clone();
    let runtime = support_store::builder()
        .await
        .agent::<t2_agent>()
        .model("scripted", model)
        .tool(FnTool::new("t2_list", "Lists files.", |args| async move {
            lock(&T2_TOOL_ARGS).push(args);
            HookToolResult::success("a.rs")
        }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("t2_agent", ThreadOptions::default()).await.unwrap();
    thread.send("list").await.unwrap();

    let seen = lock(&T2_SEEN).clone();
    assert_eq!(
        seen,
        [(start + 1, String::new(), None, "call_t2".to_owned(), "t2_list".to_owned())],
        "ran right after the ToolCallStart event, before any argument fragment, without progress"
    );
    assert_eq!(*lock(&T2_TOOL_ARGS), [json!({"dir": "src"})], "the tool got the complete arguments");
}

// ---------------------------------------------------------------------------------------------
// T3: with a progress argument: right after the fragment that closes it, with its value.

static T3_MODEL: OnceLock<ScriptedModel> = OnceLock::new();
static T3_SEEN: Mutex<Vec<StartedSeen>> = Mutex::new(Vec::new());
static T3_TOOL_RAN_AFTER_HOOK: Mutex<Vec<bool>> = Mutex::new(Vec::new());

#[hook(tool_call_started, id = "t3_record_started")]
fn t3_record_started(_state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    let delivered = T3_MODEL.get().expect("model set").delivered_events();
    lock(&T3_SEEN).push((
        delivered,
        call.function.arguments.clone(),
        progress.map(str::to_owned),
        call.id.clone(),
        call.function.name.clone(),
    ));
}

clause_agent! {
    agent: t3_agent,
    prompt: t3_prompt,
    text: "T3.",
    tools: ["t3_write_file"],
    hooks: [t3_record_started],
}

#[tokio::test]
async fn t3_progress_argument_runs_right_after_it_streamed_before_the_content() {
    // `path` is `fixing "index.html" café`, cut mid-key, between a backslash and the quote it
    // escapes, and inside a \u escape; a large `content` follows.
    let head = [r#"{"pa"#, r#"th":"fixing \"#, r#""index.ht"#, r#"ml\"#, r#"" caf\u0"#, r#"0e9"#, r#"""#];
    let mut parts: Vec<String> = fragments(&head);
    let closing = parts.len() - 1;
    parts.push(r#","content":""#.to_owned());
    for i in 0..40 {
        parts.push(format!("<p>paragraph {i} of the page, long enough to take a while</p>"));
    }
    parts.push(r#""}"#.to_owned());
    let response = ScriptedResponse::default().then_tool_call_in_fragments("call_t3", "t3_write_file", &parts);
    let total_events = response.events().len();
    let model = T3_MODEL.get_or_init(|| ScriptedModel::new([response, ScriptedResponse::text("written")])).clone();
    let runtime = support_store::builder()
        .await
        .agent::<t3_agent>()
        .model("scripted", model)
        .tool(
            FnTool::new("t3_write_file", "Writes a file.", |args| async move {
                lock(&T3_TOOL_RAN_AFTER_HOOK).push(!lock(&T3_SEEN).is_empty());
                let content = args["content"].as_str().unwrap_or_default().len();
                HookToolResult::success(format!("{} bytes to {}", content, args["path"].as_str().unwrap_or_default()))
            })
            .with_progress_argument("path"),
        )
        .build()
        .unwrap();
    let thread = runtime.create_thread("t3_agent", ThreadOptions::default()).await.unwrap();
    thread.send("fix it").await.unwrap();

    let seen = lock(&T3_SEEN).clone();
    assert_eq!(seen.len(), 1, "exactly once: {seen:?}");
    let (delivered, arguments, progress, id, name) = &seen[0];
    // Event 0 is ToolCallStart, fragment k is event k + 1: the hook ran as that event was
    // handed out, before the next one.
    assert_eq!(*delivered, closing + 2, "ran right after the closing fragment");
    assert!(*delivered < total_events, "before the content finished streaming");
    assert_eq!(progress.as_deref(), Some("fixing \"index.html\" café"));
    assert_eq!(arguments, &head.concat(), "arguments so far");
    assert_eq!((id.as_str(), name.as_str()), ("call_t3", "t3_write_file"));
    assert_eq!(*lock(&T3_TOOL_RAN_AFTER_HOOK), [true], "the tool ran once, after the hook");
    let stored = tool_message(&thread, "call_t3").await;
    assert!(stored.content.as_deref().unwrap().ends_with("to fixing \"index.html\" café"), "{stored:?}");
}

static T3B_MODEL: OnceLock<ScriptedModel> = OnceLock::new();
static T3B_SEEN: Mutex<Vec<StartedSeen>> = Mutex::new(Vec::new());

#[hook(tool_call_started, id = "t3b_record_started")]
fn t3b_record_started(_state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    let delivered = T3B_MODEL.get().expect("model set").delivered_events();
    lock(&T3B_SEEN).push((
        delivered,
        call.function.arguments.clone(),
        progress.map(str::to_owned),
        call.id.clone(),
        call.function.name.clone(),
    ));
}

clause_agent! {
    agent: t3b_agent,
    prompt: t3b_prompt,
    text: "T3b.",
    tools: ["t3b_write_file"],
    hooks: [t3b_record_started],
}

#[tokio::test]
async fn t3_missing_progress_argument_runs_after_the_response_with_none() {
    // The call never sends `path`; the response goes on with text after the call.
    let response = ScriptedResponse::default()
        .then_tool_call("call_t3b", "t3b_write_file", r#"{"content":"<p>hi</p>","mode":"w"}"#)
        .then_text("Writing the file now, please wait.");
    let total_events = response.events().len();
    let model = T3B_MODEL.get_or_init(|| ScriptedModel::new([response, ScriptedResponse::text("ok")])).clone();
    let runtime = support_store::builder()
        .await
        .agent::<t3b_agent>()
        .model("scripted", model)
        .tool(
            FnTool::new("t3b_write_file", "Writes a file.", |_args| async move { HookToolResult::success("ok") })
                .with_progress_argument("path"),
        )
        .build()
        .unwrap();
    let thread = runtime.create_thread("t3b_agent", ThreadOptions::default()).await.unwrap();
    thread.send("write").await.unwrap();

    let seen = lock(&T3B_SEEN).clone();
    assert_eq!(
        seen,
        [(
            total_events,
            r#"{"content":"<p>hi</p>","mode":"w"}"#.to_owned(),
            None,
            "call_t3b".to_owned(),
            "t3b_write_file".to_owned()
        )],
        "once, after every event of the response, progress None"
    );
}

// ---------------------------------------------------------------------------------------------
// T4: tool_call_done once per call, after the tool, before the success/failure chain, with the
// result the tool returned.

static T4_TIMELINE: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn result_text(result: &HookToolResult) -> String {
    result.result.clone().or_else(|| result.error.clone()).unwrap_or_default()
}

#[hook(tool_call_done, id = "t4_done")]
fn t4_done(_state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    lock(&T4_TIMELINE).push(format!("done:{}:{}:{}", call.id, result.status.as_str(), result_text(result)));
}

#[hook(after_tool_call_success, id = "t4_success")]
fn t4_success(_state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    lock(&T4_TIMELINE).push(format!("success:{}", call.id));
    Some(HookToolResult::success("replaced ok"))
}

#[hook(after_tool_call_failure, id = "t4_failure")]
async fn t4_failure(_state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    lock(&T4_TIMELINE).push(format!("failure:{}", call.id));
    Some(HookToolResult::error("replaced failure"))
}

clause_agent! {
    agent: t4_agent,
    prompt: t4_prompt,
    text: "T4.",
    tools: ["t4_ok", "t4_fail"],
    hooks: [t4_success, t4_failure, t4_done],
}

#[tokio::test]
async fn t4_tool_call_done_runs_once_after_the_tool_before_the_result_chains() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_ok", "t4_ok", "{}").then_tool_call("call_fail", "t4_fail", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let runtime = support_store::builder()
        .await
        .agent::<t4_agent>()
        .model("scripted", model)
        .tool(FnTool::new("t4_ok", "Succeeds.", |_| async {
            lock(&T4_TIMELINE).push("tool:ok".to_owned());
            HookToolResult::success("original ok")
        }))
        .tool(FnTool::new("t4_fail", "Fails.", |_| async {
            lock(&T4_TIMELINE).push("tool:fail".to_owned());
            HookToolResult::error("original failure")
        }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("t4_agent", ThreadOptions::default()).await.unwrap();
    thread.send("go").await.unwrap();

    assert_eq!(
        *lock(&T4_TIMELINE),
        [
            "tool:ok",
            "done:call_ok:success:original ok",
            "success:call_ok",
            "tool:fail",
            "done:call_fail:error:original failure",
            "failure:call_fail",
        ],
        "tool_call_done once per call, after the tool, before the chain, with the tool's own result"
    );
    // The chains did replace the results; tool_call_done saw them before that.
    assert_eq!(tool_message(&thread, "call_ok").await.content.as_deref(), Some("replaced ok"));
    assert_eq!(tool_message(&thread, "call_fail").await.content.as_deref(), Some("replaced failure"));
}

// ---------------------------------------------------------------------------------------------
// T5: None keeps, Some replaces, a failing hook keeps the last good value, later hooks run.

static T5_SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn t5_see(hook: &str, result: &HookToolResult) {
    lock(&T5_SEEN).push(format!("{hook}:{}:{}", result.status.as_str(), result_text(result)));
}

#[hook(after_tool_call_success, id = "t5_keep")]
fn t5_keep(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("keep", result);
    None
}

#[hook(after_tool_call_success, id = "t5_replace")]
fn t5_replace(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("replace", result);
    Some(HookToolResult::success("replaced"))
}

#[hook(after_tool_call_success, id = "t5_fail")]
fn t5_fail(
    _state: &ThreadState,
    _call: &HookToolCall,
    result: &HookToolResult,
) -> Result<Option<HookToolResult>, HookError> {
    t5_see("fail", result);
    Err(HookError::new("cannot"))
}

#[hook(after_tool_call_success, id = "t5_panic")]
async fn t5_panic(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("panic", result);
    panic!("t5_panic fails on purpose");
}

#[hook(after_tool_call_success, id = "t5_last")]
async fn t5_last(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("last", result);
    Some(HookToolResult::success(format!("{}+last", result_text(result))))
}

#[hook(after_tool_call_failure, id = "t5_f_keep")]
fn t5_f_keep(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("f_keep", result);
    None
}

#[hook(after_tool_call_failure, id = "t5_f_replace")]
async fn t5_f_replace(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("f_replace", result);
    Some(HookToolResult::error("rewritten error"))
}

#[hook(after_tool_call_failure, id = "t5_f_fail")]
async fn t5_f_fail(
    _state: &ThreadState,
    _call: &HookToolCall,
    result: &HookToolResult,
) -> Result<Option<HookToolResult>, HookError> {
    t5_see("f_fail", result);
    Err(HookError::new("cannot"))
}

#[hook(after_tool_call_failure, id = "t5_f_last")]
fn t5_f_last(_state: &ThreadState, _call: &HookToolCall, result: &HookToolResult) -> Option<HookToolResult> {
    t5_see("f_last", result);
    None
}

clause_agent! {
    agent: t5_agent,
    prompt: t5_prompt,
    text: "T5.",
    tools: ["t5_ok", "t5_bad"],
    hooks: [t5_keep, t5_replace, t5_fail, t5_panic, t5_last, t5_f_keep, t5_f_replace, t5_f_fail, t5_f_last],
}

#[tokio::test]
async fn t5_success_and_failure_chains_keep_replace_and_pass_the_last_good_value() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_ok", "t5_ok", "{}").then_tool_call("call_bad", "t5_bad", "{}"),
        ScriptedResponse::text("done"),
    ]);
    let runtime = support_store::builder()
        .await
        .agent::<t5_agent>()
        .model("scripted", model)
        .tool(FnTool::new("t5_ok", "Succeeds.", |_| async { HookToolResult::success("original") }))
        .tool(FnTool::new("t5_bad", "Fails.", |_| async { HookToolResult::error("original error") }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("t5_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("go").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("done"));

    assert_eq!(
        *lock(&T5_SEEN),
        [
            "keep:success:original",
            "replace:success:original",
            "fail:success:replaced",
            "panic:success:replaced",
            "last:success:replaced",
            "f_keep:error:original error",
            "f_replace:error:original error",
            "f_fail:error:rewritten error",
            "f_last:error:rewritten error",
        ]
    );
    let ok = tool_message(&thread, "call_ok").await;
    assert_eq!(ok.content.as_deref(), Some("replaced+last"));
    assert_eq!(ok.extra_str("tool_status"), Some("success"));
    let bad = tool_message(&thread, "call_bad").await;
    assert_eq!(bad.content.as_deref(), Some("rewritten error"));
    assert_eq!(bad.extra_str("tool_status"), Some("error"));
}

// ---------------------------------------------------------------------------------------------
// T6: before_store_tool_result's value is stored; attachments survive a rewrite of `result`.

/// (hook, call id, tool name, result text, attachments present, tool messages stored so far)
type T6Seen = (&'static str, String, String, String, bool, usize);
static T6_SEEN: Mutex<Vec<T6Seen>> = Mutex::new(Vec::new());

fn t6_attachments() -> Vec<Attachment> {
    vec![Attachment::Ref(
        AttachmentRef::new("/docs/report.pdf").with_name("report.pdf").with_mime_type("application/pdf"),
    )]
}

async fn t6_see(hook: &'static str, state: &ThreadState, call: &ToolCallRecord, result: &HookToolResult) {
    let stored = state
        .get_messages(MessageQuery::new().with_silent(true))
        .await
        .unwrap()
        .iter()
        .filter(|message| message.role == Role::Tool)
        .count();
    lock(&T6_SEEN).push((
        hook,
        call.id.clone(),
        call.name().to_owned(),
        result_text(result),
        result.attachments.is_some(),
        stored,
    ));
}

#[hook(before_store_tool_result, id = "t6_redact")]
async fn t6_redact(state: &ThreadState, call: &ToolCallRecord, mut result: HookToolResult) -> HookToolResult {
    t6_see("redact", state, call, &result).await;
    result.result = result.result.map(|text| text.replace('@', " at "));
    result
}

#[hook(before_store_tool_result, id = "t6_check")]
async fn t6_check(state: &ThreadState, call: &ToolCallRecord, mut result: HookToolResult) -> HookToolResult {
    t6_see("check", state, call, &result).await;
    result.result = result.result.map(|text| format!("{text} [checked]"));
    result
}

clause_agent! {
    agent: t6_agent,
    prompt: t6_prompt,
    text: "T6.",
    tools: ["t6_fetch"],
    hooks: [t6_redact, t6_check],
}

#[tokio::test]
async fn t6_before_store_tool_result_value_is_stored_and_attachments_survive() {
    let model =
        ScriptedModel::new([ScriptedResponse::tool_call("call_t6", "t6_fetch", "{}"), ScriptedResponse::text("ok")]);
    let runtime = support_store::builder()
        .await
        .agent::<t6_agent>()
        .model("scripted", model)
        .tool(FnTool::new("t6_fetch", "Fetches a contact.", |_| async {
            let mut result = HookToolResult::success("contact: alice@example.com");
            result.attachments = Some(t6_attachments());
            result
        }))
        .build()
        .unwrap();
    let thread = runtime.create_thread("t6_agent", ThreadOptions::default()).await.unwrap();
    thread.send("fetch").await.unwrap();

    let seen = lock(&T6_SEEN).clone();
    let call = ("call_t6".to_owned(), "t6_fetch".to_owned());
    assert_eq!(
        seen,
        [
            ("redact", call.0.clone(), call.1.clone(), "contact: alice@example.com".to_owned(), true, 0),
            ("check", call.0.clone(), call.1.clone(), "contact: alice at example.com".to_owned(), true, 0),
        ],
        "each hook gets the previous one's value, with the attachments, before anything is stored"
    );
    let stored = tool_message(&thread, "call_t6").await;
    assert_eq!(stored.content.as_deref(), Some("contact: alice at example.com [checked]"));
    assert_eq!(stored.extra.get("attachments"), Some(&serde_json::to_value(t6_attachments()).unwrap()));
    assert_eq!(stored.extra_str("tool_status"), Some("success"));
}

// ---------------------------------------------------------------------------------------------
// T7: thread events with no hook selected, and at the moment of the hooks when selected.

clause_agent! {
    agent: t7_bare_agent,
    prompt: t7_bare_prompt,
    text: "T7 without hooks.",
    tools: ["t7_bare_plain", "t7_bare_write"],
}

#[tokio::test]
async fn t7_tool_events_are_broadcast_with_no_hook_selected() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_plain", "t7_bare_plain", r#"{"q":1}"#).then_tool_call(
            "call_write",
            "t7_bare_write",
            r#"{"path":"index.html","content":"<html></html>"}"#,
        ),
        ScriptedResponse::text("done"),
    ]);
    let runtime = support_store::builder()
        .await
        .agent::<t7_bare_agent>()
        .model("scripted", model)
        .tool(FnTool::new("t7_bare_plain", "Succeeds.", |_| async { HookToolResult::success("ok") }))
        .tool(
            FnTool::new("t7_bare_write", "Fails.", |_| async { HookToolResult::error("disk full") })
                .with_progress_argument("path"),
        )
        .build()
        .unwrap();
    let agent = runtime.agent("t7_bare_agent").unwrap();
    for kind in [HookKind::ToolCallStarted, HookKind::ToolCallDone] {
        assert!(agent.resolved().hook_chain(ActiveContext::Side(Side::A), kind).is_empty(), "no {kind} hook selected");
    }
    let thread = runtime.create_thread("t7_bare_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    thread.send("go").await.unwrap();

    assert_eq!(
        tool_events(drain(&mut events)),
        [
            ThreadEvent::ToolCallStarted { id: "call_plain".into(), name: "t7_bare_plain".into(), progress: None },
            ThreadEvent::ToolCallStarted {
                id: "call_write".into(),
                name: "t7_bare_write".into(),
                progress: Some("index.html".into()),
            },
            ThreadEvent::ToolCallDone {
                id: "call_plain".into(),
                name: "t7_bare_plain".into(),
                status: ToolStatus::Success,
                denied: false,
                interrupted: false,
            },
            ThreadEvent::ToolCallDone {
                id: "call_write".into(),
                name: "t7_bare_write".into(),
                status: ToolStatus::Error,
                denied: false,
                interrupted: false,
            },
        ]
    );
}

/// Every marker of the T7 run, with the events received so far drained in before each marker.
static T7_TIMELINE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static T7_EVENTS: Mutex<Option<tokio::sync::broadcast::Receiver<ThreadEvent>>> = Mutex::new(None);

fn t7_mark(marker: String) {
    let mut timeline = lock(&T7_TIMELINE);
    if let Some(receiver) = lock(&T7_EVENTS).as_mut() {
        for event in tool_events(drain(receiver)) {
            timeline.push(match event {
                ThreadEvent::ToolCallStarted { id, name, progress } => {
                    format!("event:started:{id}:{name}:{}", progress.unwrap_or_default())
                }
                ThreadEvent::ToolCallDone { id, name, status, .. } => {
                    format!("event:done:{id}:{name}:{}", status.as_str())
                }
                _ => unreachable!(),
            });
        }
    }
    timeline.push(marker);
}

#[hook(tool_call_started, id = "t7_started")]
fn t7_started(_state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    t7_mark(format!("hook:started:{}:{}", call.id, progress.unwrap_or_default()));
}

#[hook(tool_call_done, id = "t7_done")]
async fn t7_done(_state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    t7_mark(format!("hook:done:{}:{}", call.id, result.status.as_str()));
}

#[hook(after_tool_call_success, id = "t7_after_success")]
fn t7_after_success(_state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    t7_mark(format!("hook:after:{}", call.id));
    None
}

#[hook(after_tool_call_failure, id = "t7_after_failure")]
fn t7_after_failure(_state: &ThreadState, call: &HookToolCall, _result: &HookToolResult) -> Option<HookToolResult> {
    t7_mark(format!("hook:after:{}", call.id));
    None
}

clause_agent! {
    agent: t7_agent,
    prompt: t7_prompt,
    text: "T7 with hooks.",
    tools: ["t7_plain", "t7_write"],
    hooks: [t7_started, t7_done, t7_after_success, t7_after_failure],
}

#[tokio::test]
async fn t7_tool_events_are_broadcast_at_the_moment_of_the_hooks() {
    let model = ScriptedModel::new([
        ScriptedResponse::tool_call("call_plain", "t7_plain", r#"{"q":1}"#).then_tool_call(
            "call_write",
            "t7_write",
            r#"{"path":"index.html","content":"<html></html>"}"#,
        ),
        ScriptedResponse::text("done"),
    ]);
    let runtime = support_store::builder()
        .await
        .agent::<t7_agent>()
        .model("scripted", model)
        .tool(FnTool::new("t7_plain", "Succeeds.", |_| async {
            t7_mark("tool:plain".into());
            HookToolResult::success("ok")
        }))
        .tool(
            FnTool::new("t7_write", "Fails.", |_| async {
                t7_mark("tool:write".into());
                HookToolResult::error("disk full")
            })
            .with_progress_argument("path"),
        )
        .build()
        .unwrap();
    let thread = runtime.create_thread("t7_agent", ThreadOptions::default()).await.unwrap();
    *lock(&T7_EVENTS) = Some(thread.subscribe());
    thread.send("go").await.unwrap();
    t7_mark("end".into());

    assert_eq!(
        *lock(&T7_TIMELINE),
        [
            "event:started:call_plain:t7_plain:",
            "hook:started:call_plain:",
            "event:started:call_write:t7_write:index.html",
            "hook:started:call_write:index.html",
            "tool:plain",
            "event:done:call_plain:t7_plain:success",
            "hook:done:call_plain:success",
            "hook:after:call_plain",
            "tool:write",
            "event:done:call_write:t7_write:error",
            "hook:done:call_write:error",
            "hook:after:call_write",
            "end",
        ],
        "each event reaches subscribers right as its hooks run: not earlier, not after the next step"
    );
}

// ---------------------------------------------------------------------------------------------
// T1, T3, T7 for a tool call queued with `state.queue_tool`: it did not stream, but it is a tool
// call all the same, so `tool_call_started` (and its event) runs once before the tool, with the
// progress argument read from the complete arguments.

static T1Q_TIMELINE: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[hook(after_thread_created, id = "t1q_queue")]
fn t1q_queue(state: &ThreadState) {
    state.queue_tool("t1q_save", json!({ "path": "notes.txt", "content": "remember the milk" }));
}

#[hook(tool_call_started, id = "t1q_started")]
fn t1q_started(_state: &ThreadState, call: &HookToolCall, progress: Option<&str>) {
    lock(&T1Q_TIMELINE).push(format!("started:{}:{}", call.function.name, progress.unwrap_or("-")));
}

#[hook(tool_call_done, id = "t1q_done")]
fn t1q_done(_state: &ThreadState, call: &HookToolCall, result: &HookToolResult) {
    lock(&T1Q_TIMELINE).push(format!("done:{}:{}", call.function.name, result_text(result)));
}

clause_agent! {
    agent: t1q_agent,
    prompt: t1q_prompt,
    text: "T1 queued.",
    tools: ["t1q_save"],
    hooks: [t1q_started, t1q_done],
    agent_hooks: [t1q_queue],
}

#[tokio::test]
async fn t1_queued_tool_call_runs_tool_call_started_once_before_the_tool() {
    let runtime = support_store::builder()
        .await
        .agent::<t1q_agent>()
        .model("scripted", ScriptedModel::default())
        .tool(
            FnTool::new("t1q_save", "Saves a note.", |args| async move {
                lock(&T1Q_TIMELINE).push("tool".to_owned());
                HookToolResult::success(format!("saved {}", args["path"].as_str().unwrap_or_default()))
            })
            .with_progress_argument("path"),
        )
        .build()
        .unwrap();
    let thread = runtime.create_thread("t1q_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    thread.run_queued().await.unwrap();

    assert_eq!(
        *lock(&T1Q_TIMELINE),
        ["started:t1q_save:notes.txt", "tool", "done:t1q_save:saved notes.txt"],
        "a queued call gets tool_call_started once, before the tool, like a streamed one"
    );
    let tool_events = tool_events(drain(&mut events));
    let call_id = match &tool_events[..] {
        [
            ThreadEvent::ToolCallStarted { id, name, progress },
            ThreadEvent::ToolCallDone { id: done_id, status, .. },
        ] => {
            assert_eq!((name.as_str(), progress.as_deref()), ("t1q_save", Some("notes.txt")));
            assert_eq!((done_id, *status), (id, ToolStatus::Success));
            id.clone()
        }
        other => panic!("expected started then done, got {other:?}"),
    };
    assert_eq!(tool_message(&thread, &call_id).await.content.as_deref(), Some("saved notes.txt"));
}
