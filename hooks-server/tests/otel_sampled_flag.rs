//! H6: a request's `traceparent` joins the caller's trace, but by default its sampled flag
//! cannot switch export off: a run sent with flags `00` is exported to a real receiver
//! (`scripts/otlp_receiver.py`) all the same. With
//! `ServerConfig::honor_unsampled_traceparent`, the flag is followed.
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
use hooks_server::ServerConfig;
use otlp_support::{Receiver, named};
use support::{ALICE, Server};
use tracing_subscriber::layer::SubscriberExt;

define_prompt! { name: h6_prompt, model: "scripted", prompt: "Go." }
define_agent! { name: h6_agent, side_a: { prompt: h6_prompt, stop_on_response: true } }

const UNSAMPLED_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const HONORED_TRACE: &str = "5cf92f3577b34da6a3ce929d0e0e4737";
const CALLER_SPAN_ID: &str = "00f067aa0ba902b7";

fn runtime() -> Runtime {
    Runtime::builder()
        .agent::<h6_agent>()
        .model("scripted", ScriptedModel::new([ScriptedResponse::text("Done."), ScriptedResponse::text("Done.")]))
        .build()
        .unwrap()
}

/// Sends a message with `traceparent` and waits until its run has finished.
async fn send(server: &Server, thread: &str, traceparent: &str) {
    let mut stream = server.stream(&format!("/threads/{thread}/events"), ALICE, None).await;
    let response = server
        .request(reqwest::Method::POST, &format!("/threads/{thread}/messages"), ALICE)
        .header("content-type", "application/json")
        .header("traceparent", traceparent)
        .body(r#"{"content":"Go."}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let events = stream.until("run_finished").await;
    assert_eq!(events.last().unwrap().data["status"], "idle", "{:?}", events.last());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h6_a_client_cannot_switch_export_off_for_its_runs_unless_the_server_allows_it() {
    let receiver = Receiver::start();
    let exporter = OtlpExporter::new(&receiver.endpoint).unwrap();
    // Global: the server's runs go on in tasks of the runtime's worker threads.
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(exporter.layer())).unwrap();

    // By default: flags `00`, and the run is exported, in the caller's trace.
    let server = Server::start(runtime(), ServerConfig::default()).await;
    let thread = server.create_thread(ALICE, "h6_agent").await;
    send(&server, &thread, &format!("00-{UNSAMPLED_TRACE}-{CALLER_SPAN_ID}-00")).await;
    exporter.flush().unwrap();
    let spans = receiver.spans();
    let runs = named(&spans, "invoke_agent h6_agent");
    assert_eq!(runs.len(), 1, "the run sent with flags 00 is exported: {spans:#?}");
    assert_eq!(runs[0]["traceId"], UNSAMPLED_TRACE, "in the caller's trace: {}", runs[0]);

    // Allowed by the application: flags `00` is followed, and nothing of that run is exported
    // (the flush waits for every ended span, so what is not there now was not sent).
    let server = Server::start(runtime(), ServerConfig::default().honor_unsampled_traceparent(true)).await;
    let thread = server.create_thread(ALICE, "h6_agent").await;
    send(&server, &thread, &format!("00-{HONORED_TRACE}-{CALLER_SPAN_ID}-00")).await;
    // A sampled request after it, as the witness that the exporter still works.
    send(&server, &thread, &format!("00-{HONORED_TRACE}-{CALLER_SPAN_ID}-01")).await;
    exporter.flush().unwrap();
    let spans = receiver.spans();
    let honored: Vec<_> =
        named(&spans, "invoke_agent h6_agent").into_iter().filter(|span| span["traceId"] == HONORED_TRACE).collect();
    assert_eq!(honored.len(), 1, "only the sampled request's run is exported: {spans:#?}");
}
