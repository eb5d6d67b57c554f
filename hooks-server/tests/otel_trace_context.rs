//! V3: a message sent with a W3C `traceparent` header runs as part of the caller's trace: its
//! run's spans, exported over OTLP to a real receiver (`scripts/otlp_receiver.py`), descend from
//! the caller's span. A message sent without the header starts a trace of its own.
//!
//! Needs feature `otel` and the receiver's Python (`.ci/run` installs it); fails, never skips,
//! without it.

#[path = "../../hooks-runtime/tests/otlp_support/mod.rs"]
mod otlp_support;
mod support;

use hooks_runtime::Runtime;
use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::otel::OtlpExporter;
use hooks_runtime::prelude::*;
use hooks_runtime::tool::FnTool;
use hooks_server::ServerConfig;
use otlp_support::{Receiver, named};
use serde_json::Value;
use support::{ALICE, Server};
use tracing_subscriber::layer::SubscriberExt;

#[hook(before_tool_call, id = "v3_allow", on_failure = deny)]
fn v3_allow(_state: &ThreadState, _call: &HookToolCall, _arguments: &mut Value) -> ToolDecision {
    ToolDecision::allow()
}

define_prompt! { name: v3_prompt, model: "scripted", prompt: "Go.", tools: ["lookup"], hooks: [v3_allow] }
define_agent! { name: v3_agent, side_a: { prompt: v3_prompt, stop_on_response: true, max_steps: 4 } }

/// The caller's trace and span, as its `traceparent` names them.
const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID: &str = "00f067aa0ba902b7";

fn runtime() -> Runtime {
    let turn =
        || [ScriptedResponse::tool_call("call_1", "lookup", r#"{"q":"x"}"#), ScriptedResponse::text("Found it.")];
    Runtime::builder()
        .agent::<v3_agent>()
        .model("scripted", ScriptedModel::new(turn().into_iter().chain(turn())))
        .tool(FnTool::new("lookup", "Looks up.", |_args| async { HookToolResult::success("found") }))
        .build()
        .unwrap()
}

/// Sends a message, with `traceparent` when given, and waits until its run has finished.
async fn send(server: &Server, thread: &str, traceparent: Option<&str>) {
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    let mut request = server
        .request(reqwest::Method::POST, &format!("/threads/{thread}/messages"), ALICE)
        .header("content-type", "application/json")
        .body(r#"{"content":"Look it up."}"#);
    if let Some(traceparent) = traceparent {
        request = request.header("traceparent", traceparent).header("tracestate", "vendor=v3");
    }
    assert_eq!(request.send().await.unwrap().status(), 202);
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "idle", "{:?}", events.last());
}

/// The span with `span_id`.
fn by_id<'a>(spans: &'a [Value], span_id: &Value) -> Option<&'a Value> {
    spans.iter().find(|span| &span["spanId"] == span_id)
}

/// The spans from `span` up to its root among `spans`, and the parent id the root names (the
/// remote caller's, or "" for a trace's own root).
fn ancestry<'a>(spans: &'a [Value], mut span: &'a Value) -> (Vec<&'a str>, String) {
    let mut names = vec![span["name"].as_str().unwrap()];
    while let Some(parent) = by_id(spans, &span["parentSpanId"]) {
        names.push(parent["name"].as_str().unwrap());
        span = parent;
    }
    (names, span["parentSpanId"].as_str().unwrap().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v3_a_run_continues_the_trace_of_the_traceparent_it_was_sent_with() {
    let receiver = Receiver::start();
    let exporter = OtlpExporter::new(&receiver.endpoint).unwrap();
    // Global: the server's runs go on in tasks of the runtime's worker threads.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(exporter.layer())).unwrap();
    let server = Server::start(runtime(), ServerConfig::default()).await;
    let thread = server.create_thread(ALICE, "v3_agent").await;

    send(&server, &thread, Some(&format!("00-{TRACE_ID}-{CALLER_SPAN_ID}-01"))).await;
    exporter.flush().unwrap();
    let spans = receiver.spans();
    let runs = named(&spans, "invoke_agent v3_agent");
    assert_eq!(runs.len(), 1, "{spans:#?}");
    let run = runs[0];
    assert_eq!(run["traceId"], TRACE_ID, "the run is in the caller's trace: {run}");
    let (names, remote) = ancestry(&spans, run);
    assert_eq!(remote, CALLER_SPAN_ID, "the run descends from the caller's span: {names:?}");
    let request = format!("POST /threads/{thread}/messages");
    assert_eq!(names, ["invoke_agent v3_agent", "hooks_server_run", request.as_str()]);
    // Everything the run did is in that trace, under the run.
    for name in ["chat scripted", "execute_tool lookup", "hook v3_allow"] {
        let span = named(&spans, name).into_iter().next().unwrap_or_else(|| panic!("no `{name}` span: {spans:#?}"));
        assert_eq!(span["traceId"], TRACE_ID, "{span}");
        assert!(ancestry(&spans, span).0.contains(&"invoke_agent v3_agent"), "{span}");
    }

    // Without the header: a trace of its own.
    send(&server, &thread, None).await;
    exporter.flush().unwrap();
    let spans = receiver.spans();
    let runs = named(&spans, "invoke_agent v3_agent");
    assert_eq!(runs.len(), 2);
    let own = runs.iter().find(|run| run["traceId"] != TRACE_ID).expect("a run in a trace of its own");
    let (names, remote) = ancestry(&spans, own);
    assert_eq!((names, remote.as_str()), (vec!["invoke_agent v3_agent", "hooks_server_run"], ""));
}
