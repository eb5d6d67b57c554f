//! `OpenAiModel` against a hand-written HTTP/1.1 server on 127.0.0.1: what it sends, how it reads
//! server-sent events cut at awkward places, and how each failure is reported. The `t2_` and `t3_`
//! tests check the timing the runtime needs over the wire: a tool call is announced, and its
//! argument fragments passed on, while the server is still holding back the rest of the response.

#![cfg(feature = "openai")]

use crate::openai_support;

use std::time::Duration;

use hooks_runtime::model::FinishReason;
use hooks_runtime::model::{Model, ModelError, ModelEvent, OpenAiConfig, OpenAiModel, ProviderErrorKind};
use openai_support::{
    DONE, Framing, Reply, Step, args, arguments_of, cut_after, cut_every, delta, drain, end, finish, finished, model,
    read_request, request, run, serve, start, text, tool_delta, usage, within, write_file_tool,
};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// The tool-call arguments of the escape test: a JSON text with `\n` and `\u00e9` escapes in it.
const ESCAPED_ARGUMENTS: &str = r#"{"path":"index.html","content":"line1\nline2 \u00e9"}"#;
/// The same, as the model streams it: cut inside `\n` and inside `\u00e9`.
const ESCAPED_FRAGMENTS: [&str; 4] = [r#"{"path":"ind"#, r#"ex.html","content":"line1\"#, r#"nline2 \u00"#, r#"e9"}"#];

// ---------------------------------------------------------------------------------------------
// Streams that succeed
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_text_reply_streams_as_text_deltas_and_the_request_is_complete() {
    let body = [
        ": OPENROUTER PROCESSING\n\n".to_owned(),
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": "Hello"})),
        delta(json!({"content": ", wörld"})).replace("\n\n", "\r\n\r\n"),
        delta(json!({"content": " — done."})),
        finish("stop"),
        format!("data: {}\n\n", json!({"choices": [], "usage": {"total_tokens": 9}})),
        DONE.to_owned(),
    ]
    .concat();
    let (base_url, server) = serve(Reply::events(cut_every(&body, 7))).await;

    let (events, error) = run(&base_url, request(vec![])).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![text("Hello"), text(", wörld"), text(" — done."), finished(FinishReason::Stop), usage(0, 0, 9)]
    );
    let recorded = server.await.unwrap();
    assert_eq!(recorded.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(recorded.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(recorded.header("accept"), Some("text/event-stream"));
    assert_eq!(recorded.header("user-agent"), Some(concat!("hooks-runtime/", env!("CARGO_PKG_VERSION"))));
    assert_eq!(
        recorded.body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You write files."},
                {"role": "user", "content": "Make index.html, please."},
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
        }),
        "no `tools` key when there are no tools"
    );
}

#[tokio::test]
async fn tool_call_arguments_cut_mid_string_and_mid_escape_pass_through_unchanged() {
    assert_eq!(ESCAPED_FRAGMENTS.concat(), ESCAPED_ARGUMENTS);
    let mut body = tool_delta(json!([{
        "index": 0, "id": "call_abc", "type": "function",
        "function": {"name": "write_file", "arguments": ""},
    }]));
    for fragment in ESCAPED_FRAGMENTS {
        body.push_str(&tool_delta(json!([{"index": 0, "function": {"arguments": fragment}}])));
    }
    body.push_str(&finish("tool_calls"));
    body.push_str(DONE);
    // On the wire the fragments are JSON strings inside JSON: `\n` is `\\n` and `\u00e9` is
    // `\\u00e9`. Cut the network writes between those doubled backslashes, inside `u00`, and in
    // the middle of `data:`.
    let steps = cut_after(&body, &["da", r#"line1\"#, r#"2 \"#, "u0", "\n"]);
    let (base_url, server) = serve(Reply::events(steps)).await;

    let (events, error) = run(&base_url, request(vec![write_file_tool()])).await;

    assert_eq!(error, None);
    let mut expected = vec![start(0, "call_abc", "write_file")];
    expected.extend(ESCAPED_FRAGMENTS.map(|fragment| args(0, fragment)));
    expected.push(end(0));
    expected.push(finished(FinishReason::ToolCalls));
    assert_eq!(events, expected);
    assert_eq!(arguments_of(&events, 0), ESCAPED_ARGUMENTS);
    let parsed: Value = serde_json::from_str(&arguments_of(&events, 0)).unwrap();
    assert_eq!(parsed["content"], "line1\nline2 é");

    let recorded = server.await.unwrap();
    assert_eq!(recorded.body["stream"], true);
    assert_eq!(recorded.body["model"], "gpt-test");
    assert_eq!(recorded.body["messages"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        recorded.body["tools"],
        json!([{
            "type": "function",
            "function": {
                "name": "write_file",
                "description": "Writes a file.",
                "parameters": write_file_tool().parameters,
            },
        }])
    );
}

#[tokio::test]
async fn two_parallel_tool_calls_interleaved_by_index_stay_apart() {
    let body = [
        delta(json!({"role": "assistant", "content": null})),
        tool_delta(json!([{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": ""}}])),
        tool_delta(json!([{"index": 1, "id": "call_b", "type": "function", "function": {"name": "list_dir", "arguments": ""}}])),
        tool_delta(json!([{"index": 0, "function": {"arguments": "{\"path\":"}}])),
        tool_delta(json!([{"index": 1, "function": {"arguments": "{\"dir\":\"sr"}}])),
        tool_delta(json!([{"index": 0, "function": {"arguments": "\"a.txt\"}"}}, {"index": 1, "function": {"arguments": "c\"}"}}])),
        finish("tool_calls"),
        DONE.to_owned(),
    ]
    .concat();
    let (base_url, _server) = serve(Reply::events(cut_every(&body, 11))).await;

    let (events, error) = run(&base_url, request(vec![write_file_tool()])).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            start(0, "call_a", "read_file"),
            start(1, "call_b", "list_dir"),
            args(0, "{\"path\":"),
            args(1, "{\"dir\":\"sr"),
            args(0, "\"a.txt\"}"),
            args(1, "c\"}"),
            end(0),
            end(1),
            finished(FinishReason::ToolCalls),
        ]
    );
    assert_eq!(arguments_of(&events, 0), r#"{"path":"a.txt"}"#);
    assert_eq!(arguments_of(&events, 1), r#"{"dir":"src"}"#);
}

#[tokio::test]
async fn a_name_arriving_after_the_index_holds_the_call_back_until_it_is_known() {
    let body = [
        tool_delta(json!([{"index": 0, "id": "call_late", "type": "function", "function": {"arguments": ""}}])),
        tool_delta(json!([{"index": 0, "function": {"arguments": "{\"pa"}}])),
        tool_delta(json!([{"index": 0, "function": {"name": "read_file"}}])),
        tool_delta(json!([{"index": 0, "function": {"arguments": "th\":\"a\"}"}}])),
        finish("tool_calls"),
        DONE.to_owned(),
    ]
    .concat();
    let (base_url, _server) = serve(Reply::events(cut_every(&body, 13))).await;

    let (events, error) = run(&base_url, request(vec![])).await;

    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            start(0, "call_late", "read_file"),
            args(0, "{\"pa"),
            args(0, "th\":\"a\"}"),
            end(0),
            finished(FinishReason::ToolCalls)
        ]
    );
}

#[tokio::test]
async fn a_finish_reason_without_done_is_a_complete_response() {
    let body = [delta(json!({"content": "ok"})), finish("stop")].concat();
    let reply = Reply { framing: Framing::Close, ..Reply::events(cut_every(&body, 9)) };
    let (base_url, _server) = serve(reply).await;

    assert_eq!(run(&base_url, request(vec![])).await, (vec![text("ok"), finished(FinishReason::Stop)], None));
}

#[tokio::test]
async fn no_api_key_sends_no_authorization_and_extra_headers_are_sent() {
    let body = [delta(json!({"content": "hi"})), finish("stop"), DONE.to_owned()].concat();
    let (base_url, server) = serve(Reply::events(cut_every(&body, 50))).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_header("X-Title", "hooks tests"));

    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    assert_eq!(drain(&mut stream).await, (vec![text("hi"), finished(FinishReason::Stop)], None));

    let recorded = server.await.unwrap();
    assert_eq!(recorded.header("authorization"), None);
    assert_eq!(recorded.header("x-title"), Some("hooks tests"));
}

// ---------------------------------------------------------------------------------------------
// What the runtime needs over the wire
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn t2_tool_call_start_arrives_before_its_arguments_and_before_the_stream_ends() {
    let (go_on, paused) = oneshot::channel();
    let head = tool_delta(json!([{
        "index": 0, "id": "call_t2", "type": "function",
        "function": {"name": "write_file", "arguments": ""},
    }]));
    let mut rest = String::new();
    for fragment in ESCAPED_FRAGMENTS {
        rest.push_str(&tool_delta(json!([{"index": 0, "function": {"arguments": fragment}}])));
    }
    rest.push_str(&finish("tool_calls"));
    rest.push_str(DONE);
    let (base_url, _server) =
        serve(Reply::events(vec![Step::Send(head.into_bytes()), Step::WaitFor(paused), Step::Send(rest.into_bytes())]))
            .await;
    let mut stream = within(model(&base_url).stream(request(vec![write_file_tool()]))).await.unwrap();

    // The server is paused right after the start chunk: the start must already be through.
    let first = within(stream.next_event()).await;
    assert_eq!(first, Some(Ok(start(0, "call_t2", "write_file"))));

    go_on.send(()).unwrap();
    let (events, error) = drain(&mut stream).await;
    assert_eq!(error, None);
    let mut expected: Vec<ModelEvent> = ESCAPED_FRAGMENTS.map(|fragment| args(0, fragment)).into();
    expected.push(end(0));
    expected.push(finished(FinishReason::ToolCalls));
    assert_eq!(events, expected);
}

#[tokio::test]
async fn t3_argument_fragments_arrive_incrementally() {
    let (go_on, paused) = oneshot::channel();
    let [first_fragment, later_fragments @ ..] = ESCAPED_FRAGMENTS;
    let head = [
        tool_delta(json!([{
            "index": 0, "id": "call_t3", "type": "function",
            "function": {"name": "write_file", "arguments": ""},
        }])),
        tool_delta(json!([{"index": 0, "function": {"arguments": first_fragment}}])),
    ]
    .concat();
    let mut rest = String::new();
    for fragment in later_fragments {
        rest.push_str(&tool_delta(json!([{"index": 0, "function": {"arguments": fragment}}])));
    }
    rest.push_str(&finish("tool_calls"));
    rest.push_str(DONE);
    let (base_url, _server) =
        serve(Reply::events(vec![Step::Send(head.into_bytes()), Step::WaitFor(paused), Step::Send(rest.into_bytes())]))
            .await;
    let mut stream = within(model(&base_url).stream(request(vec![write_file_tool()]))).await.unwrap();

    // The server is paused after the first fragment: it must already be through, on its own.
    assert_eq!(within(stream.next_event()).await, Some(Ok(start(0, "call_t3", "write_file"))));
    assert_eq!(within(stream.next_event()).await, Some(Ok(args(0, first_fragment))));

    go_on.send(()).unwrap();
    let (events, error) = drain(&mut stream).await;
    assert_eq!(error, None);
    let mut expected: Vec<ModelEvent> = later_fragments.iter().map(|fragment| args(0, fragment)).collect();
    expected.push(end(0));
    expected.push(finished(FinishReason::ToolCalls));
    assert_eq!(events, expected);
    let all = [first_fragment].into_iter().chain(later_fragments).collect::<String>();
    assert_eq!(all, ESCAPED_ARGUMENTS);
}

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn http_401_with_a_json_error_body_is_an_http_error_with_its_message() {
    let body = r#"{"error":{"message":"Incorrect API key provided: sk-test***","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    let reply = Reply {
        status: "401 Unauthorized",
        content_type: "application/json",
        framing: Framing::Length,
        steps: vec![Step::Send(body.as_bytes().to_vec())],
        headers: "",
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(model(&base_url).stream(request(vec![]))).await.err().expect("an error");

    let provider = error.provider().expect("a provider error");
    assert_eq!(provider.status(), Some(401));
    assert_eq!(provider.kind(), ProviderErrorKind::Authentication);
    assert_eq!(provider.provider_type(), Some("invalid_request_error"));
    assert_eq!(provider.code(), Some("invalid_api_key"));
    assert_eq!(provider.message(), "Incorrect API key provided: sk-test***");
    assert_eq!(error.to_string(), "model endpoint returned HTTP 401 (authentication failed)");
}

#[tokio::test]
async fn http_502_with_a_text_body_keeps_the_text_out_of_its_display() {
    let reply = Reply {
        status: "502 Bad Gateway",
        content_type: "text/html",
        framing: Framing::Close,
        steps: vec![Step::Send(b"<html>upstream down</html>\n".to_vec())],
        headers: "",
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(model(&base_url).stream(request(vec![]))).await.err().expect("an error");

    assert_eq!(error.status(), Some(502));
    assert_eq!(error.provider().map(|provider| provider.message()), Some("<html>upstream down</html>"));
    assert_eq!(error.to_string(), "model endpoint returned HTTP 502 (server error)");
}

#[tokio::test]
async fn a_data_line_that_is_not_json_is_malformed_and_does_not_echo_it() {
    let body = [delta(json!({"content": "fine"})), "data: {\"choices\": [secret user text\n\n".to_owned()].concat();
    let (base_url, _server) = serve(Reply::events(cut_every(&body, 16))).await;

    let (events, error) = run(&base_url, request(vec![])).await;

    assert_eq!(events, vec![text("fine")]);
    let Some(ModelError::Malformed(message)) = error else { panic!("expected Malformed, got {error:?}") };
    assert!(message.starts_with("expected a JSON chat-completion chunk or `[DONE]` in a `data:` line"), "{message}");
    assert!(!message.contains("secret"), "{message}");
}

#[tokio::test]
async fn a_stream_cut_without_done_or_finish_reason_is_malformed() {
    let body = [
        delta(json!({"content": "Half a"})),
        tool_delta(json!([{"index": 0, "id": "call_cut", "function": {"name": "write_file", "arguments": "{\"pa"}}])),
    ]
    .concat();
    let reply = Reply { framing: Framing::Close, ..Reply::events(cut_every(&body, 10)) };
    let (base_url, _server) = serve(reply).await;

    let (events, error) = run(&base_url, request(vec![])).await;

    assert_eq!(events, vec![text("Half a"), start(0, "call_cut", "write_file"), args(0, "{\"pa")]);
    assert_eq!(error, Some(ModelError::Malformed("stream ended before the response was complete".to_owned())));
}

#[tokio::test]
async fn a_connection_dropped_mid_chunk_is_a_transport_error() {
    let mut steps = cut_every(&delta(json!({"content": "partial"})), 1000);
    // Half an event, then the connection drops before the chunked body's last chunk.
    steps.push(Step::Send(b"data: {\"choi".to_vec()));
    steps.push(Step::Drop);
    let reply = Reply::events(steps);
    let (base_url, _server) = serve(reply).await;

    let (events, error) = run(&base_url, request(vec![])).await;

    assert_eq!(events, vec![text("partial")]);
    assert!(matches!(error, Some(ModelError::Transport { .. })), "{error:?}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let _server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        std::future::pending::<()>().await;
    });
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_timeout(Duration::from_millis(200)));

    let error = within(model.stream(request(vec![]))).await.err();

    assert_eq!(error, Some(ModelError::Timeout("the model endpoint did not answer within 200ms".to_owned())));
}

#[tokio::test]
async fn a_stream_that_goes_quiet_times_out_between_chunks() {
    let steps = vec![Step::Send(delta(json!({"content": "thinking"})).into_bytes()), Step::Hang];
    let (base_url, _server) = serve(Reply::events(steps)).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_timeout(Duration::from_millis(300)));

    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    let (events, error) = drain(&mut stream).await;

    assert_eq!(events, vec![text("thinking")]);
    assert_eq!(error, Some(ModelError::Timeout("the model endpoint sent nothing for 300ms".to_owned())));
}

#[tokio::test]
async fn a_closed_port_is_a_transport_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);

    let error = within(model(&base_url).stream(request(vec![]))).await.err();

    let Some(ModelError::Transport { message, source }) = &error else { panic!("expected Transport, got {error:?}") };
    assert!(message.to_lowercase().contains("connection refused"), "{message}");
    assert!(!message.contains("sk-test-key"), "{message}");
    // The HTTP client's error is kept as the source, down to the refused connect.
    assert!(source.is_some(), "{error:?}");
    let mut cause = std::error::Error::source(error.as_ref().unwrap());
    let mut refused = None;
    while let Some(error) = cause {
        refused = refused.or(error.downcast_ref::<std::io::Error>().map(std::io::Error::kind));
        cause = error.source();
    }
    assert_eq!(refused, Some(std::io::ErrorKind::ConnectionRefused), "{error:?}");
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_malformed_and_says_what_it_got() {
    let body = r#"{"error":{"message":"streaming is not supported"}}"#;
    let reply = Reply {
        status: "200 OK",
        content_type: "application/json",
        framing: Framing::Length,
        steps: vec![Step::Send(body.as_bytes().to_vec())],
        headers: "",
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(model(&base_url).stream(request(vec![]))).await.err();

    let Some(ModelError::Malformed(message)) = error else { panic!("expected Malformed, got {error:?}") };
    assert!(message.contains("text/event-stream"), "{message}");
    assert!(!message.contains("streaming is not supported"), "the body goes to the log, not the error: {message}");
}
