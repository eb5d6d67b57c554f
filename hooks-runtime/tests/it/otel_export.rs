//! V1, V2: the runtime's spans exported over OTLP (HTTP/protobuf) to a real receiver
//! (`scripts/otlp_receiver.py`, the official `opentelemetry-proto` definitions), and read back
//! decoded: the span tree of a run and the GenAI attributes on each span.
//!
//! Needs the receiver's Python (`.ci/run` installs it); fails, never skips, without it.

use crate::otlp_support;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse, Usage};
use hooks_runtime::otel::OtlpExporter;
use hooks_runtime::tool::FnTool;
use hooks_runtime::types::HookToolResult;
use hooks_runtime::{Runtime, ThreadOptions};
use otlp_support::{Receiver, named, one};
use serde_json::{Value, json};
use tracing_subscriber::layer::SubscriberExt;

mod hooks {
    use hooks_runtime::prelude::*;
    use serde_json::Value;

    #[hook(before_tool_call, id = "lookups_allowed", on_failure = deny)]
    pub(crate) fn lookups_allowed(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
        ToolDecision::allow()
    }

    #[hook(tool_call_done, id = "note_tool_done")]
    pub(crate) fn note_tool_done(_state: &ThreadState, _call: &HookToolCall, _result: &HookToolResult) {}

    /// Keeps the last message only, so that its chain's span has counts that differ.
    #[hook(filter_messages, id = "traced_last_message")]
    pub(crate) fn traced_last_message(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        keep_last_messages(messages, 1);
    }
}

mod agents {
    use hooks_runtime::prelude::*;

    define_prompt! {
        name: traced_prompt,
        model: "scripted",
        prompt: "Look things up.",
        tools: ["lookup"],
        hooks: [crate::otel_export::hooks::lookups_allowed, crate::otel_export::hooks::note_tool_done],
    }
    define_agent! { name: traced_agent, side_a: { prompt: traced_prompt, stop_on_response: true } }

    // Runs on the model added as `ops`: an alias, which the OpenAI client replaces with the
    // endpoint's model id.
    define_prompt! {
        name: ops_prompt,
        model: "ops",
        prompt: "Answer.",
        hooks: [crate::otel_export::hooks::traced_last_message],
    }
    define_agent! { name: ops_agent, side_a: { prompt: ops_prompt, stop_on_response: true } }
}

fn lookup() -> FnTool {
    FnTool::new("lookup", "Looks a word up.", |args: Value| async move {
        match args["q"].as_str() {
            Some("missing") => HookToolResult::error("no entry for that word"),
            word => HookToolResult::success(format!("the entry for {}", word.unwrap_or("?"))),
        }
    })
}

/// Two steps: two lookups (one fails), then the reply.
fn script() -> Vec<ScriptedResponse> {
    vec![
        ScriptedResponse::tool_call("call_ok", "lookup", r#"{"q":"zebra-secret-argument"}"#)
            .then_tool_call("call_missing", "lookup", r#"{"q":"missing"}"#)
            .with_usage(Usage::new(10, 3, 13)),
        ScriptedResponse::text("The zebra-secret-reply.").with_usage(Usage::new(20, 2, 22)),
    ]
}

/// Runs one turn of `runtime` with every span exported to a fresh receiver; the spans it got
/// and the thread's id.
async fn traced_turn(runtime: Runtime) -> (Vec<Value>, String) {
    let receiver = Receiver::start();
    let exporter = OtlpExporter::new(&receiver.endpoint).unwrap();
    let subscriber = tracing_subscriber::registry().with(exporter.layer());
    let guard = tracing::subscriber::set_default(subscriber);
    let thread = runtime.create_thread("traced_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("Look up zebra-secret-question.").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("The zebra-secret-reply."));
    drop(guard);
    exporter.flush().unwrap();
    (receiver.spans(), thread.id().to_owned())
}

fn runtime(contents: bool) -> Runtime {
    Runtime::builder()
        .agent::<agents::traced_agent>()
        .model("scripted", ScriptedModel::new(script()))
        .tool(lookup())
        .trace_contents(contents)
        .build()
        .unwrap()
}

fn attribute<'a>(span: &'a Value, key: &str) -> &'a Value {
    &span["attributes"][key]
}

fn children<'a>(spans: &'a [Value], parent: &Value) -> Vec<&'a Value> {
    spans.iter().filter(|span| span["parentSpanId"] == parent["spanId"]).collect()
}

#[tokio::test]
async fn v1_run_model_tool_and_hook_spans_follow_the_genai_conventions_over_otlp() {
    let (spans, thread_id) = traced_turn(runtime(false)).await;

    // The run: the root of one trace, every other span in it.
    let run = one(&spans, "invoke_agent traced_agent");
    assert_eq!(run["parentSpanId"], "", "the run is the root here");
    assert!(spans.iter().all(|span| span["traceId"] == run["traceId"]), "one trace: {spans:#?}");
    assert_eq!(attribute(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attribute(run, "gen_ai.agent.name"), "traced_agent");
    assert_eq!(attribute(run, "gen_ai.conversation.id"), thread_id.as_str());
    assert_eq!(attribute(run, "gen_ai.usage.input_tokens"), 30);
    assert_eq!(attribute(run, "gen_ai.usage.output_tokens"), 5);
    assert_eq!(run["service"], "hooks-runtime");

    // Two model calls, children of the run, with model, finish reasons and tokens.
    let chats = named(&spans, "chat scripted");
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for chat in &chats {
        assert_eq!(chat["parentSpanId"], run["spanId"]);
        assert_eq!(attribute(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attribute(chat, "gen_ai.request.model"), "scripted");
        assert_eq!(attribute(chat, "gen_ai.conversation.id"), thread_id.as_str());
        assert_eq!(chat["kind"], 3, "SPAN_KIND_CLIENT");
    }
    let first = chats.iter().find(|chat| attribute(chat, "hooks.step") == 1).expect("step 1");
    assert_eq!(attribute(first, "gen_ai.response.finish_reasons"), &json!(["tool_calls"]));
    assert_eq!(attribute(first, "gen_ai.usage.input_tokens"), 10);
    assert_eq!(attribute(first, "gen_ai.usage.output_tokens"), 3);
    let second = chats.iter().find(|chat| attribute(chat, "hooks.step") == 2).expect("step 2");
    assert_eq!(attribute(second, "gen_ai.response.finish_reasons"), &json!(["stop"]));

    // Two tool calls, children of the run, named by tool and call id; the failed one says so.
    let tools = named(&spans, "execute_tool lookup");
    assert_eq!(tools.len(), 2, "{spans:#?}");
    let by_id = |id: &str| *tools.iter().find(|span| attribute(span, "gen_ai.tool.call.id") == id).expect(id);
    for tool in &tools {
        assert_eq!(tool["parentSpanId"], run["spanId"]);
        assert_eq!(attribute(tool, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(attribute(tool, "gen_ai.tool.name"), "lookup");
        assert_eq!(attribute(tool, "gen_ai.tool.type"), "function");
    }
    let ok = by_id("call_ok");
    assert_eq!(attribute(ok, "hooks.tool.outcome"), "success");
    assert_eq!(attribute(ok, "error.type"), &Value::Null);
    assert_eq!(ok["status"]["code"], 0, "unset");
    let missing = by_id("call_missing");
    assert_eq!(attribute(missing, "error.type"), "error");
    assert_eq!(missing["status"]["code"], 2, "STATUS_CODE_ERROR");

    // Each tool call's hooks are its children: the governing hook with its decision, then the
    // event hook.
    for tool in [ok, missing] {
        let hooks = children(&spans, tool);
        let governing = hooks.iter().find(|span| span["name"] == "hook lookups_allowed").expect("the governing hook");
        assert_eq!(attribute(governing, "hook.id"), "lookups_allowed");
        assert_eq!(attribute(governing, "hook.kind"), "before_tool_call");
        assert_eq!(attribute(governing, "hook.source"), "prompt:traced_prompt");
        assert_eq!(attribute(governing, "hook.decision"), "allow");
        let done = hooks.iter().find(|span| span["name"] == "hook note_tool_done").expect("the event hook");
        assert_eq!(attribute(done, "hook.kind"), "tool_call_done");
        assert!(attribute(done, "hook.decision").is_null());
    }
    assert_eq!(named(&spans, "hook lookups_allowed").len(), 2, "no hook span outside its tool call");
    for span in &spans {
        let (start, end) = (span["startTimeUnixNano"].as_u64().unwrap(), span["endTimeUnixNano"].as_u64().unwrap());
        assert!(start > 0 && end >= start, "{span}");
    }
}

#[tokio::test]
async fn v2_contents_arguments_and_results_are_on_spans_only_when_the_application_opts_in() {
    let contents =
        ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];

    let (spans, _) = traced_turn(runtime(false)).await;
    assert!(!spans.is_empty());
    for span in &spans {
        for key in contents {
            assert!(attribute(span, key).is_null(), "`{key}` on a span by default: {span}");
        }
        assert!(!span.to_string().contains("zebra-secret"), "a content on a span by default: {span}");
    }

    let (spans, _) = traced_turn(runtime(true)).await;
    let chats = named(&spans, "chat scripted");
    let first = chats.iter().find(|chat| attribute(chat, "hooks.step") == 1).expect("step 1");
    let input: Value = serde_json::from_str(attribute(first, "gen_ai.input.messages").as_str().unwrap()).unwrap();
    let user = input.as_array().unwrap().iter().find(|message| message["role"] == "user").expect("the user message");
    assert_eq!(user["parts"], json!([{"type": "text", "content": "Look up zebra-secret-question."}]));
    let output: Value = serde_json::from_str(attribute(first, "gen_ai.output.messages").as_str().unwrap()).unwrap();
    assert_eq!(output[0]["role"], "assistant");
    assert_eq!(
        output[0]["parts"][0],
        json!({"type": "tool_call", "id": "call_ok", "name": "lookup", "arguments": {"q": "zebra-secret-argument"}})
    );
    let second = chats.iter().find(|chat| attribute(chat, "hooks.step") == 2).expect("step 2");
    let output: Value = serde_json::from_str(attribute(second, "gen_ai.output.messages").as_str().unwrap()).unwrap();
    assert_eq!(output[0]["parts"], json!([{"type": "text", "content": "The zebra-secret-reply."}]));
    let tools = named(&spans, "execute_tool lookup");
    let ok = tools.iter().find(|span| attribute(span, "gen_ai.tool.call.id") == "call_ok").unwrap();
    assert_eq!(attribute(ok, "gen_ai.tool.call.arguments"), r#"{"q":"zebra-secret-argument"}"#);
    assert_eq!(attribute(ok, "gen_ai.tool.call.result"), "the entry for zebra-secret-argument");
    let missing = tools.iter().find(|span| attribute(span, "gen_ai.tool.call.id") == "call_missing").unwrap();
    assert_eq!(attribute(missing, "gen_ai.tool.call.result"), "no entry for that word");
}

/// A chunk as OpenAI streams it, naming the model that answered (a dated snapshot of the
/// requested `gpt-4o-mini`).
#[cfg(feature = "openai")]
fn openai_chunk(choices: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_721_172_741,
        "model": "gpt-4o-mini-2024-07-18", "choices": choices,
    });
    format!("data: {chunk}\n\n")
}

#[cfg(feature = "openai")]
#[tokio::test]
async fn v1_chat_spans_name_the_model_id_the_request_carried_not_the_prompts_alias() {
    use crate::openai_support::{self, DONE, Reply, Step};
    use hooks_runtime::model::{OpenAiConfig, OpenAiModel};

    let body = [
        openai_chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": "Fine."}, "finish_reason": null}])),
        openai_chunk(json!([{"index": 0, "delta": {}, "finish_reason": "stop"}])),
        DONE.to_owned(),
    ]
    .concat();
    let (base_url, request) = openai_support::serve(Reply::events(vec![Step::Send(body.into_bytes())])).await;
    // As `OPENAI_MODEL=gpt-4o-mini` sets it.
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_model("gpt-4o-mini").with_max_retries(0));
    let runtime = Runtime::builder().agent::<agents::ops_agent>().model("ops", model).build().unwrap();

    let receiver = Receiver::start();
    let exporter = OtlpExporter::new(&receiver.endpoint).unwrap();
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(exporter.layer()));
    let thread = runtime.create_thread("ops_agent", ThreadOptions::default()).await.unwrap();
    let first = openai_support::within(thread.send("First.")).await.unwrap();
    assert_eq!(first.reply.as_deref(), Some("Fine."));
    // The server answered its one request and is gone: the second call fails to connect.
    let sent = request.await.unwrap();
    let second = openai_support::within(thread.send("Second.")).await.unwrap();
    assert!(second.error.is_some(), "{second:?}");
    drop(guard);
    exporter.flush().unwrap();
    let spans = receiver.spans();

    assert_eq!(sent.body["model"], "gpt-4o-mini", "the id the request carried");
    let chats: Vec<&Value> = spans.iter().filter(|span| attribute(span, "gen_ai.operation.name") == "chat").collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for chat in &chats {
        assert_eq!(chat["name"], "chat gpt-4o-mini", "named by the model id, not the alias `ops`");
        assert_eq!(attribute(chat, "gen_ai.request.model"), &sent.body["model"]);
        assert_eq!(attribute(chat, "hooks.model"), "ops", "the prompt's name for it stays on the span");
        assert!(attribute(chat, "gen_ai.provider.name").is_null(), "a server on 127.0.0.1 names no provider");
    }
    let answered =
        chats.iter().find(|chat| attribute(chat, "hooks.step") == 1 && attribute(chat, "error.type").is_null());
    let answered = answered.expect("the answered call");
    assert_eq!(attribute(answered, "gen_ai.response.model"), "gpt-4o-mini-2024-07-18", "the model that answered");
    let failed = chats.iter().find(|chat| attribute(chat, "error.type") == "model_error").expect("the failed call");
    assert!(attribute(failed, "gen_ai.response.model").is_null(), "no response, no response model");

    // The `filter_messages` chain's span carries its counts as integers; no span carries the
    // build machine's source paths.
    let filters = named(&spans, "filter_messages_chain");
    let second =
        filters.iter().find(|span| attribute(span, "messages_before") == 3).expect("the second request's chain");
    assert_eq!(attribute(second, "messages_after"), 1);
    for span in &spans {
        let keys = span["attributes"].as_object().unwrap();
        assert!(keys.keys().all(|key| !key.starts_with("code.")), "a source location on a span: {span}");
    }
}
