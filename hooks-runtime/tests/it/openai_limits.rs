//! `OpenAiModel`'s limits against a hand-written server on 127.0.0.1: the total deadline ends a
//! response that trickles, that sends only keep-alive comments, or whose error body trickles; the
//! caps on reply text and tool-call arguments abandon the stream as soon as they are passed; and
//! many tool calls in one response each start and end in order. Every
//! failure names the limit and its value, never what the response said.

#![cfg(feature = "openai")]

use crate::openai_support;

use std::time::Duration;

use hooks_runtime::model::{Model, ModelError, ModelEvent, OpenAiConfig, OpenAiModel};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};
use openai_support::{DONE, Framing, Reply, Step, delta, drain, finish, request, serve, text, tool_delta, within};
use serde_json::json;

/// The deadline of the deadline tests: short, so they run quickly; the idle timeout is far longer,
/// so only the deadline can end them.
const DEADLINE: Duration = Duration::from_millis(800);
const DEADLINE_TEXT: &str = "the request passed its total deadline of 800ms (`OpenAiConfig::with_deadline`)";

fn deadline_model(base_url: &str) -> OpenAiModel {
    OpenAiModel::new(OpenAiConfig::new(base_url).with_timeout(Duration::from_secs(30)).with_deadline(DEADLINE))
}

// ---------------------------------------------------------------------------------------------
// The total deadline
// ---------------------------------------------------------------------------------------------

// On paused time: the deadline, the idle timeout and the server's pauses are timers of tokio's
// clock, which jumps from one to the next whenever both ends wait (no wall-clock time passes);
// the Timeout error that names the deadline is what only the deadline gives.

#[tokio::test(start_paused = true)]
async fn a_body_that_trickles_one_byte_at_a_time_ends_at_the_deadline() {
    // Text deltas, one byte every few milliseconds: no wait comes near the idle timeout.
    let body = delta(json!({"content": "a"}));
    let steps = body.bytes().cycle().take(10_000).map(|byte| Step::Send(vec![byte])).collect();
    let (base_url, _server) = serve(Reply::events(steps)).await;

    let mut stream = within(deadline_model(&base_url).stream(request(vec![]))).await.unwrap();
    // Bounded as a whole: each delta comes in time, so only the response as a whole can be late.
    let (events, error) = within(drain(&mut stream)).await;

    assert!(events.iter().all(|event| *event == text("a")), "{events:?}");
    assert_eq!(error, Some(ModelError::Timeout(DEADLINE_TEXT.to_owned())));
}

#[tokio::test(start_paused = true)]
async fn a_stream_of_only_keep_alive_comments_ends_at_the_deadline() {
    let steps = vec![Step::Trickle(b": keep-alive\n\n".to_vec(), Duration::from_millis(10))];
    let (base_url, _server) = serve(Reply::events(steps)).await;

    let mut stream = within(deadline_model(&base_url).stream(request(vec![]))).await.unwrap();
    let (events, error) = drain(&mut stream).await;

    assert_eq!(events, vec![]);
    assert_eq!(error, Some(ModelError::Timeout(DEADLINE_TEXT.to_owned())));
}

// Not on paused time: a server that never pauses never lets tokio's clock jump, so the deadline
// comes in real time (800 ms).
#[tokio::test]
async fn keep_alive_comments_sent_without_pause_still_end_at_the_deadline() {
    // Every read may find data already waiting.
    let steps = vec![Step::Trickle(b": keep-alive\n\n".repeat(64), Duration::ZERO)];
    let (base_url, _server) = serve(Reply::events(steps)).await;

    let mut stream = within(deadline_model(&base_url).stream(request(vec![]))).await.unwrap();
    let (_, error) = drain(&mut stream).await;

    assert_eq!(error, Some(ModelError::Timeout(DEADLINE_TEXT.to_owned())));
}

#[tokio::test(start_paused = true)]
async fn a_503_whose_body_trickles_ends_at_the_deadline_with_its_status() {
    let reply = Reply {
        status: "503 Service Unavailable",
        content_type: "text/plain",
        framing: Framing::Close,
        steps: vec![Step::Trickle(b"busy ".to_vec(), Duration::from_millis(20))],
        headers: "",
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(deadline_model(&base_url).stream(request(vec![]))).await.err();

    let Some(ModelError::Provider(error)) = error else { panic!("expected HTTP 503, got {error:?}") };
    assert_eq!(error.status(), Some(503));
    assert!(error.message().starts_with("busy busy"), "{}", error.message());
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_sends_its_headers_ends_at_the_deadline() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let _silent = tokio::spawn(async move {
        let (socket, _) = listener.accept().await.unwrap();
        std::future::pending::<()>().await;
        drop(socket);
    });

    let error = within(deadline_model(&silent_url).stream(request(vec![]))).await.err();

    assert_eq!(error, Some(ModelError::Timeout(DEADLINE_TEXT.to_owned())));
}

define_prompt! { name: deadline_prompt, model: "remote", prompt: "Answer." }
define_agent! { name: deadline_agent, side_a: { prompt: deadline_prompt } }

#[tokio::test(start_paused = true)]
async fn a_send_against_a_keep_alive_only_stream_fails_with_a_model_error_naming_the_deadline() {
    let steps = vec![Step::Trickle(b": keep-alive\n\n".to_vec(), Duration::from_millis(10))];
    let (base_url, _server) = serve(Reply::events(steps)).await;
    let runtime =
        Runtime::builder().agent::<deadline_agent>().model("remote", deadline_model(&base_url)).build().unwrap();
    let thread = runtime.create_thread("deadline_agent", ThreadOptions::default()).await.unwrap();

    let outcome = within(thread.send("hello")).await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::ModelError));
    assert_eq!(outcome.error.map(|error| error.to_string()), Some(format!("model request timed out: {DEADLINE_TEXT}")));
}

// ---------------------------------------------------------------------------------------------
// The size caps
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_reply_over_the_text_cap_is_abandoned_at_the_cap() {
    // 100 deltas of 100 bytes, then the server holds the rest back for good: the client must give
    // up at the cap rather than wait for the end.
    let piece = "x".repeat(100);
    let mut body = String::new();
    for _ in 0..100 {
        body.push_str(&delta(json!({"content": piece})));
    }
    let steps = vec![Step::Send(body.into_bytes()), Step::Hang];
    let (base_url, _server) = serve(Reply::events(steps)).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_max_reply_bytes(1000));

    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    let (events, error) = drain(&mut stream).await;

    assert_eq!(events, vec![text(&piece); 10], "the text up to the cap, not a byte more");
    assert_eq!(
        error,
        Some(ModelError::TooLarge(
            "the reply text passed the cap of 1000 bytes (`OpenAiConfig::with_max_reply_bytes`)".to_owned()
        ))
    );
    assert_eq!(
        error.unwrap().to_string(),
        "model response too large: the reply text passed the cap of 1000 bytes (`OpenAiConfig::with_max_reply_bytes`)"
    );
}

#[tokio::test]
async fn tool_arguments_over_the_cap_are_abandoned_at_the_cap() {
    let mut body =
        tool_delta(json!([{"index": 0, "id": "call_big", "function": {"name": "write_file", "arguments": ""}}]));
    let fragment = "y".repeat(512);
    for _ in 0..100 {
        body.push_str(&tool_delta(json!([{"index": 0, "function": {"arguments": fragment}}])));
    }
    let steps = vec![Step::Send(body.into_bytes()), Step::Hang];
    let (base_url, _server) = serve(Reply::events(steps)).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_max_tool_argument_bytes(4 * 1024));

    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    let (events, error) = drain(&mut stream).await;

    let received: usize = events
        .iter()
        .map(|event| match event {
            ModelEvent::ToolCallArguments { fragment, .. } => fragment.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(received, 4 * 1024, "the arguments up to the cap, not a byte more");
    let Some(ModelError::TooLarge(detail)) = error else { panic!("expected TooLarge, got {error:?}") };
    assert_eq!(
        detail,
        "the tool-call arguments passed the cap of 4 KiB for all calls of a response \
         (`OpenAiConfig::with_max_tool_argument_bytes`)"
    );
}

#[tokio::test]
async fn the_argument_cap_counts_all_calls_together_and_fragments_held_back() {
    // Arguments that arrive before the call's name are held back; they count all the same.
    let mut body = String::new();
    for index in 0..8 {
        body.push_str(&tool_delta(json!([{"index": index, "function": {"arguments": "z".repeat(100)}}])));
    }
    let steps = vec![Step::Send(body.into_bytes()), Step::Hang];
    let (base_url, _server) = serve(Reply::events(steps)).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_max_tool_argument_bytes(750));

    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    let (events, error) = drain(&mut stream).await;

    assert_eq!(events, vec![]);
    assert!(matches!(&error, Some(ModelError::TooLarge(detail)) if detail.contains("cap of 750 bytes")), "{error:?}");
}

// ---------------------------------------------------------------------------------------------
// Many tool calls
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn ten_thousand_tool_calls_in_one_response_each_start_and_end_in_order() {
    // How the time grows with the number of calls (linear, not a scan per fragment) is measured
    // by the `tool_call_assembly` bench.
    const CALLS: usize = 10_000;
    let mut body = String::with_capacity(CALLS * 120);
    for index in 0..CALLS {
        let call = json!([{"index": index, "id": format!("c{index}"), "function": {"name": "f", "arguments": "{}"}}]);
        body.push_str(&format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"tool_calls": call}}]})));
    }
    body.push_str(&finish("tool_calls"));
    body.push_str(DONE);
    let steps = body.into_bytes().chunks(1 << 20).map(|piece| Step::Send(piece.to_vec())).collect();
    let (base_url, _server) = serve(Reply::events(steps)).await;

    let mut stream = within(OpenAiModel::new(OpenAiConfig::new(&base_url)).stream(request(vec![]))).await.unwrap();
    let mut starts = 0;
    let mut ends = 0;
    while let Some(event) = stream.next_event().await {
        match event.unwrap() {
            ModelEvent::ToolCallStart { index, id, .. } => {
                assert_eq!((index, id), (starts, format!("c{starts}")), "calls start in order");
                starts += 1;
            }
            ModelEvent::ToolCallEnd { .. } => ends += 1,
            _ => {}
        }
    }

    assert_eq!((starts, ends), (CALLS, CALLS));
}
