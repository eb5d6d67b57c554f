//! `OpenAiModel` against a hand-written server on 127.0.0.1, for what a provider reports besides
//! the reply and what happens when it fails: usage and finish reasons read from chunks shaped as
//! the OpenAI API reference shows them, typed provider errors (status, `type`, `code`, `param`),
//! retries with backoff and `Retry-After`, an abort during a backoff, and errors that never carry
//! the provider's body or a URL's key.

#![cfg(feature = "openai")]

use crate::openai_support;

use std::time::Duration;

use hooks_runtime::model::{FinishReason, Model, ModelError, OpenAiConfig, OpenAiModel, ProviderErrorKind, Usage};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, StopReason, ThreadStatus};
use hooks_runtime::{RunError, Runtime, ThreadEvent, ThreadOptions};
use openai_support::{
    DONE, Logs, Reply, Step, delta, drain, finished, read_request, request, serve, serve_each, status_reply, text,
    usage, within,
};
use serde_json::json;

define_prompt! { name: remote_prompt, model: "remote", prompt: "Answer." }
define_agent! { name: remote_agent, side_a: { prompt: remote_prompt, stop_on_response: true } }

fn runtime(model: OpenAiModel) -> Runtime {
    Runtime::builder().agent::<remote_agent>().model("remote", model).build().unwrap()
}

/// A model with quick retries, so the tests that retry run fast.
fn retrying_model(base_url: &str, retries: u32) -> OpenAiModel {
    OpenAiModel::new(
        OpenAiConfig::new(base_url)
            .with_timeout(Duration::from_secs(5))
            .with_max_retries(retries)
            .with_retry_base_delay(Duration::from_millis(10)),
    )
}

/// A chunk as OpenAI streams it with `include_usage`: `"usage": null` on every chunk but the last.
fn chunk(choices: serde_json::Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1_694_268_190,
        "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices": choices, "usage": null,
    });
    format!("data: {chunk}\n\n")
}

/// The last chunk OpenAI sends with `include_usage`: empty `choices`, and the usage.
fn usage_chunk(prompt: u64, completion: u64) -> String {
    let chunk = json!({
        "id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1_694_268_190,
        "model": "gpt-4o-mini", "system_fingerprint": "fp_44709d6fcb", "choices": [],
        "usage": {
            "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0},
        },
    });
    format!("data: {chunk}\n\n")
}

fn reply_stream(text: &str, reason: &str, prompt: u64, completion: u64) -> String {
    [
        chunk(json!([{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}])),
        chunk(json!([{"index": 0, "delta": {"content": text}, "logprobs": null, "finish_reason": null}])),
        chunk(json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": reason}])),
        usage_chunk(prompt, completion),
        DONE.to_owned(),
    ]
    .concat()
}

// ---------------------------------------------------------------------------------------------
// Usage and finish reasons
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn usage_and_finish_reasons_are_read_from_real_shaped_chunks() {
    for (reason, expected) in [
        ("stop", FinishReason::Stop),
        ("length", FinishReason::Length),
        ("content_filter", FinishReason::ContentFilter),
        ("eos_token", FinishReason::Other("eos_token".into())),
    ] {
        let (base_url, server) =
            serve(Reply::events(vec![Step::Send(reply_stream("Hi", reason, 19, 10).into_bytes())])).await;
        let (events, error) = openai_support::run(&base_url, request(vec![])).await;
        assert_eq!(error, None);
        assert_eq!(events, vec![text("Hi"), finished(expected), usage(19, 10, 29)], "{reason}");
        assert_eq!(server.await.unwrap().body["stream_options"], json!({"include_usage": true}));
    }
}

#[tokio::test]
async fn usage_is_not_asked_for_when_turned_off() {
    let (base_url, server) =
        serve(Reply::events(vec![Step::Send(reply_stream("Hi", "stop", 1, 1).into_bytes())])).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_include_usage(false));
    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    drain(&mut stream).await;
    assert_eq!(server.await.unwrap().body.get("stream_options"), None);
}

#[tokio::test]
async fn a_run_stores_usage_and_finish_reason_on_the_message_sums_usage_and_says_when_the_reply_was_cut() {
    let replies = vec![
        Reply::events(vec![Step::Send(reply_stream("The first", "length", 19, 10).into_bytes())]),
        Reply::events(vec![Step::Send(reply_stream("Done.", "stop", 40, 2).into_bytes())]),
    ];
    let (base_url, _server) = serve_each(replies).await;
    let runtime = runtime(retrying_model(&base_url, 0));
    let thread = runtime.create_thread("remote_agent", ThreadOptions::default()).await.unwrap();
    let mut events = thread.subscribe();
    let (logs, _guard) = Logs::capture();

    let cut = within(thread.send("Tell me about it.")).await.unwrap();

    assert_eq!(cut.status, ThreadStatus::Idle);
    assert_eq!(cut.usage, Some(Usage::new(19, 10, 29)));
    assert_eq!(cut.finish_reason, Some(FinishReason::Length));
    assert!(cut.is_truncated());
    assert!(
        cut.to_string().ends_with("the last reply was cut at the model's token limit (finish reason `length`)"),
        "{cut}"
    );
    let messages = thread.messages().await.unwrap();
    let reply = messages.last().unwrap();
    assert_eq!(reply.extra.get("finish_reason"), Some(&json!("length")));
    assert_eq!(
        reply.extra.get("usage"),
        Some(&json!({"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29}))
    );
    let created = std::iter::from_fn(|| events.try_recv().ok())
        .find_map(|event| match event {
            ThreadEvent::MessageCreated { role: Role::Assistant, message, .. } => Some(message),
            _ => None,
        })
        .expect("the reply's message_created event");
    assert_eq!(created.extra.get("usage"), reply.extra.get("usage"), "the thread event carries the usage");
    let span = logs.text().lines().find(|line| line.contains("chat") && line.contains("close")).map(str::to_owned);
    let span = span.expect("the model step's span closed");
    assert!(span.contains("finish_reason=\"length\"") || span.contains("finish_reason=length"), "{span}");
    assert!(span.contains("gen_ai.usage.input_tokens=19"), "{span}");
    assert!(span.contains("gen_ai.usage.output_tokens=10"), "{span}");

    let done = within(thread.send("Go on.")).await.unwrap();
    assert_eq!(done.usage, Some(Usage::new(40, 2, 42)), "usage is summed per run");
    assert!(!done.is_truncated());
}

// ---------------------------------------------------------------------------------------------
// Retries
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_429_with_retry_after_1_is_retried_once_after_about_a_second() {
    let replies = vec![
        status_reply(
            "429 Too Many Requests",
            "Retry-After: 1\r\n",
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
        ),
        Reply::events(vec![Step::Send(reply_stream("Hi", "stop", 3, 1).into_bytes())]),
    ];
    let (base_url, server) = serve_each(replies).await;
    let (logs, _guard) = Logs::capture();

    let (events, error) = openai_support::run_with(&retrying_model(&base_url, 2), request(vec![])).await;

    assert_eq!(error, None);
    assert_eq!(events[0], text("Hi"));
    let requests = server.await.unwrap();
    let waited = requests[1].1 - requests[0].1;
    assert!(waited >= Duration::from_millis(950) && waited < Duration::from_millis(2500), "waited {waited:?}");
    let warnings = logs.warnings();
    let retries: Vec<&String> = warnings.iter().filter(|line| line.contains("retrying")).collect();
    assert_eq!(retries.len(), 1, "{warnings:#?}");
    assert!(retries[0].contains("status=429") && retries[0].contains("attempt 2 of at most 3"), "{}", retries[0]);
}

#[tokio::test]
async fn three_503s_past_the_retry_count_fail_the_run_with_the_typed_error() {
    let overloaded =
        || status_reply("503 Service Unavailable", "", r#"{"error":{"message":"overloaded","type":"server_error"}}"#);
    let (base_url, server) = serve_each(vec![overloaded(), overloaded(), overloaded()]).await;
    let runtime = runtime(retrying_model(&base_url, 2));
    let thread = runtime.create_thread("remote_agent", ThreadOptions::default()).await.unwrap();
    let (logs, _guard) = Logs::capture();

    let outcome = within(thread.send("hello")).await.unwrap();

    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::ModelError));
    assert_eq!(outcome.error.as_ref().map(RunError::message), Some("model endpoint returned HTTP 503 (server error)"));
    assert_eq!(server.await.unwrap().len(), 3, "the first attempt and two retries");
    let warnings = logs.warnings();
    for attempt in ["attempt 2 of at most 3", "attempt 3 of at most 3"] {
        assert!(
            warnings.iter().any(|line| line.contains(attempt) && line.contains("status=503")),
            "{attempt}: {warnings:#?}"
        );
    }
}

#[tokio::test]
async fn a_400_context_window_error_is_not_retried_and_is_typed() {
    let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    // One reply only: a retry would find the port closed and end with a transport error instead.
    let (base_url, server) = serve_each(vec![status_reply("400 Bad Request", "", body)]).await;
    let (logs, _guard) = Logs::capture();

    let error = within(retrying_model(&base_url, 2).stream(request(vec![]))).await.err().expect("an error");

    let provider = error.provider().expect("a provider error");
    assert_eq!(provider.status(), Some(400));
    assert_eq!(provider.kind(), ProviderErrorKind::ContextLengthExceeded);
    assert_eq!(
        (provider.provider_type(), provider.code(), provider.param()),
        (Some("invalid_request_error"), Some("context_length_exceeded"), Some("messages"))
    );
    assert_eq!(error.to_string(), "model endpoint returned HTTP 400 (context window exceeded)");
    assert_eq!(server.await.unwrap().len(), 1);
    assert!(!logs.text().contains("retrying"), "{}", logs.text());
}

#[tokio::test]
async fn a_429_that_says_the_quota_is_used_up_is_not_retried() {
    let body = r#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
    let (base_url, server) = serve_each(vec![status_reply("429 Too Many Requests", "Retry-After: 0\r\n", body)]).await;

    let error = within(retrying_model(&base_url, 2).stream(request(vec![]))).await.err().expect("an error");

    assert_eq!(error.provider().map(|provider| provider.kind()), Some(ProviderErrorKind::QuotaExceeded));
    assert_eq!(server.await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_string_code_mid_stream_keeps_its_status_and_is_not_retried() {
    // LiteLLM's shape when the upstream fails after the stream started.
    let body = [
        delta(json!({"content": "Par"})),
        format!(
            "data: {}\n\n",
            json!({"error": {"message": "upstream 10.0.0.7 failed", "type": "None", "param": "None", "code": "500"}})
        ),
    ]
    .concat();
    let (base_url, server) = serve_each(vec![Reply::events(vec![Step::Send(body.into_bytes())])]).await;

    let mut stream = within(retrying_model(&base_url, 2).stream(request(vec![]))).await.unwrap();
    let (events, error) = drain(&mut stream).await;

    assert_eq!(events, vec![text("Par")]);
    let error = error.expect("the stream's error");
    assert_eq!(error.status(), Some(500));
    let provider = error.provider().unwrap();
    assert!(provider.is_mid_stream());
    assert_eq!(provider.code(), Some("500"));
    assert_eq!(provider.kind(), ProviderErrorKind::Server);
    assert_eq!(error.to_string(), "model endpoint reported an error mid-stream, HTTP 500 (server error)");
    assert_eq!(server.await.unwrap().len(), 1);
}

// Paused time: the 30 s backoff and the test's 10 s bound (`within`) are timers of tokio's
// clock, which moves only while every task waits; at 400 ms on it the client, whose 503 came at
// once, is in its backoff. A backoff that the abort did not cut short passes the bound.
#[tokio::test(start_paused = true)]
async fn an_abort_during_a_backoff_stops_the_run_at_once() {
    let busy = status_reply("503 Service Unavailable", "Retry-After: 30\r\n", r#"{"error":{"message":"busy"}}"#);
    let (base_url, _server) = serve_each(vec![busy]).await;
    let runtime = runtime(retrying_model(&base_url, 2));
    let thread = runtime.create_thread("remote_agent", ThreadOptions::default()).await.unwrap();

    let (outcome, ()) = tokio::join!(within(thread.send("hello")), async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        thread.abort();
    });

    let outcome = outcome.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Stopped(StopReason::Aborted));
    assert_eq!(thread.status(), ThreadStatus::Stopped(StopReason::Aborted));
}

// Paused time: a wait for the retry, or until the 5 s deadline, would move tokio's clock that far.
#[tokio::test(start_paused = true)]
async fn a_retry_that_would_pass_the_deadline_is_not_waited_for() {
    let busy = status_reply("503 Service Unavailable", "Retry-After: 30\r\n", r#"{"error":{"message":"busy"}}"#);
    let (base_url, _server) = serve_each(vec![busy]).await;
    let deadline = Duration::from_secs(5);
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_deadline(deadline));
    let started = tokio::time::Instant::now();

    let error = within(model.stream(request(vec![]))).await.err().expect("an error");

    assert_eq!(error.status(), Some(503));
    assert!(tokio::time::Instant::now() < started + deadline, "the client waited for a retry past its deadline");
}

// ---------------------------------------------------------------------------------------------
// What errors never carry
// ---------------------------------------------------------------------------------------------

const SECRETS: [&str; 5] = ["password", "hunter2", "10.1.2.3", "<html", "sk-secret"];

fn assert_no_secret(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} holds `{secret}`: {text}");
    }
}

#[tokio::test]
async fn provider_bodies_never_reach_the_error_the_run_or_the_thread() {
    let json_body = r#"{"error":{"message":"upstream 10.1.2.3:8443 failed; db password=hunter2"}}"#;
    let html = "<html><body><h1>502 Bad Gateway</h1><p>upstream 10.1.2.3 password=hunter2</p></body></html>";
    for (status, content_type, body) in
        [("500 Internal Server Error", "application/json", json_body), ("502 Bad Gateway", "text/html", html)]
    {
        let reply = || Reply { content_type, ..status_reply(status, "", body) };
        let (base_url, _server) = serve_each(vec![reply(), reply()]).await;
        let direct = within(retrying_model(&base_url, 0).stream(request(vec![]))).await.err().expect("an error");
        assert_no_secret("ModelError's Display", &direct.to_string());
        assert!(direct.provider().unwrap().message().contains("hunter2"), "the caller still has the provider's text");

        let (logs, guard) = Logs::capture();
        let runtime = runtime(retrying_model(&base_url, 0));
        let thread = runtime.create_thread("remote_agent", ThreadOptions::default()).await.unwrap();
        let outcome = within(thread.send("hello")).await.unwrap();
        drop(guard);
        assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::ModelError));
        assert_no_secret("the run's outcome", &outcome.to_string());
        assert_no_secret("the thread's status", &thread.status().to_string());
        let stored = serde_json::to_string(&thread.messages().await.unwrap()).unwrap();
        assert_no_secret("the stored messages", &stored);
        assert!(stored.contains(&format!("model endpoint returned HTTP {}", &status[..3])), "{stored}");
        let logged = logs.warnings().join("\n");
        assert_no_secret("the logs at WARN (H1: the body is at DEBUG)", &logged);
        assert!(logged.contains("is logged at DEBUG"), "{logged}");
    }
}

#[tokio::test]
async fn a_keyed_url_never_appears_in_an_error_and_its_query_stays_after_the_path() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let keyed = format!("http://user:sk-secret-1@{address}/v1?api-key=sk-secret-2");
    let error = within(OpenAiModel::new(OpenAiConfig::new(&keyed)).stream(request(vec![]))).await.err().unwrap();
    assert!(matches!(error, ModelError::Transport { .. }), "{error:?}");
    assert!(!error.to_string().contains("sk-secret") && !error.to_string().contains("api-key"), "{error}");
    assert!(!format!("{error:?}").contains("sk-secret"), "{error:?}");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1?api-version=2024-02-01&api-key=sk-secret-3", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let recorded = read_request(&mut socket).await;
        openai_support::answer(&mut socket, status_reply("500 Internal Server Error", "", "{}")).await;
        recorded
    });
    let error = within(retrying_model(&base_url, 0).stream(request(vec![]))).await.err().unwrap();
    assert!(!error.to_string().contains("sk-secret"), "{error}");
    assert_eq!(
        server.await.unwrap().request_line,
        "POST /v1/chat/completions?api-version=2024-02-01&api-key=sk-secret-3 HTTP/1.1"
    );
    let shown = format!("{:?}", OpenAiConfig::new(&base_url));
    assert!(!shown.contains("sk-secret"), "{shown}");
}

#[tokio::test]
async fn an_invalid_base_url_is_refused_with_a_clear_error_that_does_not_repeat_it() {
    let error = within(OpenAiModel::new(OpenAiConfig::new("localhost:8080/v1?key=sk-secret")).stream(request(vec![])))
        .await
        .err()
        .unwrap();
    let shown = error.to_string();
    assert!(shown.contains("base URL"), "{shown}");
    assert!(!shown.contains("sk-secret"), "{shown}");
}

#[tokio::test]
async fn a_400_for_the_prompts_model_name_sent_as_the_id_says_what_was_sent_and_why() {
    // LiteLLM's answer when the id is not one of its models.
    let body = r#"{"error":{"message":"Invalid model name passed in model=gpt-test","type":"invalid_request_error","param":null,"code":"400"}}"#;
    let (base_url, server) = serve_each(vec![status_reply("400 Bad Request", "", body)]).await;
    // No model id configured: the request names the prompt's model, `gpt-test`.
    let error = within(retrying_model(&base_url, 0).stream(request(vec![]))).await.err().expect("an error");
    assert_eq!(
        error.to_string(),
        "model endpoint returned HTTP 400 (bad request); the request named model `gpt-test`, the prompt's model name, \
         since no model id is configured (`OPENAI_MODEL` or `OpenAiConfig::with_model`)"
    );
    assert_eq!(error.provider().and_then(|provider| provider.model_from_prompt()), Some("gpt-test"));
    server.await.unwrap();

    // With an id configured, the id was chosen on purpose: nothing to add.
    let (base_url, server) = serve_each(vec![status_reply("400 Bad Request", "", body)]).await;
    let model = OpenAiModel::new(
        OpenAiConfig::new(&base_url).with_model("gpt-4o-mini").with_timeout(Duration::from_secs(5)).with_max_retries(0),
    );
    let error = within(model.stream(request(vec![]))).await.err().expect("an error");
    assert_eq!(error.to_string(), "model endpoint returned HTTP 400 (bad request)");
    server.await.unwrap();
}
