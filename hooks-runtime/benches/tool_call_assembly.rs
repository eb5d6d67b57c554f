//! Tool-call assembly: one model response of N tool calls, each argument fragment found by its
//! call directly, so a turn's time grows with N, not N². Times a `thread.send` whose scripted
//! response holds 25,000, 50,000 and 100,000 calls of a tool that does not exist (the first
//! call fails and, with a limit of one failure, the turn stops there: what is timed is the
//! response's assembly and the results that say the other calls were not run, one store
//! insert each), and prints the time per call and the ratio of each size to the one half its
//! size: about 2 when assembly is linear, about 4 with a scan per fragment.
//!
//! A second group (feature `openai`, on by default) times `OpenAiModel` reading a streamed
//! response of as many calls from a server on 127.0.0.1 to its last event: the client's own
//! assembly of the calls' deltas.
//!
//! Run it with `cargo bench -p hooks-runtime --bench tool_call_assembly`; `BENCH_ROUNDS`
//! (default 5) rounds, sizes interleaved within a round, medians. No tracing subscriber is
//! installed. In-memory store.

#![allow(missing_docs)]

use std::time::{Duration, Instant};

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{StopReason, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};

define_prompt! { name: many_calls_prompt, model: "scripted", prompt: "Call tools." }
define_agent! { name: many_calls_agent, side_a: { prompt: many_calls_prompt, max_steps: 1 } }

const SIZES: [usize; 3] = [25_000, 50_000, 100_000];

/// One turn whose response holds `calls` tool calls; the runtime and response are built before
/// the clock starts.
async fn one_turn(calls: usize) -> Duration {
    let mut response = ScriptedResponse::default();
    for index in 0..calls {
        response = response.then_tool_call(&format!("call_{index}"), "missing", r#"{"n":1}"#);
    }
    let runtime = Runtime::builder()
        .agent::<many_calls_agent>()
        .model("scripted", ScriptedModel::new([response]))
        .repeated_tool_error_limit(1)
        .build()
        .unwrap();
    let thread = runtime.create_thread("many_calls_agent", ThreadOptions::default()).await.unwrap();
    let started = Instant::now();
    let outcome = thread.send("go").await.unwrap();
    let took = started.elapsed();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::RepeatedToolError), "{outcome:?}");
    took
}

/// The whole stream of an `OpenAiModel` whose response holds `calls` tool calls, from a server
/// on 127.0.0.1 that sends the body at once; the body is built before the clock starts.
#[cfg(feature = "openai")]
async fn one_openai_stream(calls: usize) -> Duration {
    use hooks_runtime::model::{Model, ModelEvent, ModelRequest, OpenAiConfig, OpenAiModel};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut body = String::with_capacity(calls * 120);
    for index in 0..calls {
        let call = serde_json::json!([{"index": index, "id": format!("c{index}"), "function": {"name": "f", "arguments": "{}"}}]);
        let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": call}}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let finish = serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    body.push_str(&format!("data: {finish}\n\ndata: [DONE]\n\n"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        // The request's head and body, then one answer; the connection closes after it.
        let mut request = Vec::new();
        let mut chunk = [0; 4096];
        loop {
            let read = socket.read(&mut chunk).await.unwrap();
            request.extend_from_slice(&chunk[..read]);
            let text = String::from_utf8_lossy(&request);
            if let Some(head_end) = text.find("\r\n\r\n") {
                let length = text[..head_end]
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned())
                    })
                    .and_then(|value| value.parse::<usize>().ok())
                    .unwrap_or(0);
                if request.len() >= head_end + 4 + length {
                    break;
                }
            }
            assert!(read > 0, "the client closed the connection before its request was complete");
        }
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        let _ = socket.write_all(body.as_bytes()).await;
        let _ = socket.shutdown().await;
    });
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url));
    let request = ModelRequest::new("m", vec![hooks_runtime::types::LlmMessage::new("user", "Call.")], Vec::new());
    let started = Instant::now();
    let mut stream = model.stream(request).await.unwrap();
    let mut ends = 0;
    while let Some(event) = stream.next_event().await {
        if let ModelEvent::ToolCallEnd { .. } = event.unwrap() {
            ends += 1;
        }
    }
    let took = started.elapsed();
    assert_eq!(ends, calls);
    server.await.unwrap();
    took
}

/// Runs `measure` for every size, `rounds` times, sizes interleaved (the order turned each
/// round), and prints the medians.
fn group<F: std::future::Future<Output = Duration>>(title: &str, rounds: usize, measure: impl Fn(usize) -> F) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); SIZES.len()];
    for round in 0..rounds {
        for k in 0..SIZES.len() {
            let index = if round % 2 == 0 { k } else { SIZES.len() - 1 - k };
            samples[index].push(runtime.block_on(measure(SIZES[index])));
        }
    }
    let medians: Vec<Duration> = samples.into_iter().map(median).collect();
    println!("{title}");
    println!("tool calls in one response | median of {rounds} | per call | ratio to half the calls");
    for (index, (calls, took)) in SIZES.iter().zip(&medians).enumerate() {
        let per_call = took.as_secs_f64() * 1e9 / *calls as f64;
        let ratio = match index {
            0 => "-".to_owned(),
            _ => format!("{:.2}", took.as_secs_f64() / medians[index - 1].as_secs_f64()),
        };
        println!("{calls:>26} | {:>9.1} ms | {per_call:>5.0} ns | {ratio}", took.as_secs_f64() * 1e3);
    }
    println!();
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(5);
    group("a turn (`thread.send`, scripted model, in-memory store)", rounds, one_turn);
    #[cfg(feature = "openai")]
    group("OpenAiModel reading the streamed response (127.0.0.1)", rounds, one_openai_stream);
}
