//! `OpenAiModel` against a hand-written HTTP/1.1 server on 127.0.0.1: what it sends, how it reads
//! server-sent events cut at awkward places, and how each failure is reported. The `t2_` and `t3_`
//! tests check the timing the runtime needs over the wire: a tool call is announced, and its
//! argument fragments passed on, while the server is still holding back the rest of the response.

#![cfg(feature = "openai")]

use std::time::Duration;

use hooks_core::LlmMessage;
use hooks_runtime::model::{
    Model, ModelError, ModelEvent, ModelRequest, ModelStream, OpenAiConfig, OpenAiModel, ToolSpec,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

// ---------------------------------------------------------------------------------------------
// The test server
// ---------------------------------------------------------------------------------------------

/// One thing the server does while answering.
enum Step {
    /// Writes these bytes (one HTTP chunk when the body is chunked), then pauses briefly so the
    /// client sees them as a separate network read.
    Send(Vec<u8>),
    /// Waits until the test says go on.
    WaitFor(oneshot::Receiver<()>),
    /// Stops answering but keeps the connection open.
    Hang,
    /// Drops the connection on the spot.
    Drop,
}

/// How the response body is delimited.
#[derive(Clone, Copy)]
enum Framing {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// `Connection: close` and no length: the body ends when the connection does.
    Close,
    /// `Content-Length` of everything the steps send.
    Length,
}

struct Reply {
    status: &'static str,
    content_type: &'static str,
    framing: Framing,
    steps: Vec<Step>,
}

impl Reply {
    fn events(steps: Vec<Step>) -> Self {
        Reply { status: "200 OK", content_type: "text/event-stream", framing: Framing::Chunked, steps }
    }
}

/// A request as the server received it.
#[derive(Debug)]
struct Recorded {
    request_line: String,
    /// Header names in lower case.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// Serves one request with `reply`; the handle yields the request.
async fn serve(reply: Reply) -> (String, JoinHandle<Recorded>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let recorded = read_request(&mut socket).await;
        answer(&mut socket, reply).await;
        recorded
    });
    (base_url, handle)
}

async fn read_request(socket: &mut TcpStream) -> Recorded {
    let mut buffer = Vec::new();
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break at;
        }
        let mut chunk = [0; 4096];
        let read = socket.read(&mut chunk).await.unwrap();
        assert!(read > 0, "the client closed the connection before its request was complete");
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).unwrap();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap().to_owned();
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    let length: usize = headers.iter().find(|(name, _)| name == "content-length").unwrap().1.parse().unwrap();
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0; 4096];
        let read = socket.read(&mut chunk).await.unwrap();
        assert!(read > 0, "the client closed the connection before its body was complete");
        body.extend_from_slice(&chunk[..read]);
    }
    Recorded { request_line, headers, body: serde_json::from_slice(&body).unwrap() }
}

async fn answer(socket: &mut TcpStream, reply: Reply) {
    let mut head = format!("HTTP/1.1 {}\r\nContent-Type: {}\r\n", reply.status, reply.content_type);
    match reply.framing {
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::Close => head.push_str("Connection: close\r\n"),
        Framing::Length => {
            let length: usize = reply
                .steps
                .iter()
                .map(|step| match step {
                    Step::Send(bytes) => bytes.len(),
                    _ => 0,
                })
                .sum();
            head.push_str(&format!("Content-Length: {length}\r\n"));
        }
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.flush().await.unwrap();
    for step in reply.steps {
        match step {
            Step::Send(bytes) => {
                if let Framing::Chunked = reply.framing {
                    socket.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await.unwrap();
                    socket.write_all(&bytes).await.unwrap();
                    socket.write_all(b"\r\n").await.unwrap();
                } else {
                    socket.write_all(&bytes).await.unwrap();
                }
                socket.flush().await.unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Step::WaitFor(go_on) => go_on.await.unwrap(),
            Step::Hang => std::future::pending::<()>().await,
            Step::Drop => return,
        }
    }
    if let Framing::Chunked = reply.framing {
        socket.write_all(b"0\r\n\r\n").await.unwrap();
    }
    socket.shutdown().await.unwrap();
}

// ---------------------------------------------------------------------------------------------
// Event-stream text and helpers
// ---------------------------------------------------------------------------------------------

/// One `data:` event holding a chat-completion chunk with this first choice.
fn event(choice: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [choice],
    });
    format!("data: {chunk}\n\n")
}

fn delta(delta: Value) -> String {
    event(json!({"index": 0, "delta": delta, "finish_reason": null}))
}

fn finish(reason: &str) -> String {
    event(json!({"index": 0, "delta": {}, "finish_reason": reason}))
}

fn tool_delta(calls: Value) -> String {
    delta(json!({"tool_calls": calls}))
}

const DONE: &str = "data: [DONE]\n\n";

/// The text cut into network writes of `size` bytes, so lines, JSON strings, escapes and UTF-8
/// characters are all split somewhere.
fn cut_every(text: &str, size: usize) -> Vec<Step> {
    text.as_bytes().chunks(size).map(|piece| Step::Send(piece.to_vec())).collect()
}

/// The text cut into network writes right after each of `markers` (in order of appearance).
fn cut_after(text: &str, markers: &[&str]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut from = 0;
    for marker in markers {
        let at = from + text[from..].find(marker).unwrap_or_else(|| panic!("{marker:?} not in the stream"));
        let to = at + marker.len();
        steps.push(Step::Send(text.as_bytes()[from..to].to_vec()));
        from = to;
    }
    steps.push(Step::Send(text.as_bytes()[from..].to_vec()));
    steps
}

fn request(tools: Vec<ToolSpec>) -> ModelRequest {
    ModelRequest {
        model: "gpt-test".to_owned(),
        messages: vec![
            LlmMessage::new("system", "You write files."),
            LlmMessage::new("user", "Make index.html, please."),
        ],
        tools,
    }
}

fn write_file_tool() -> ToolSpec {
    ToolSpec {
        name: "write_file".to_owned(),
        description: "Writes a file.".to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        }),
    }
}

fn model(base_url: &str) -> OpenAiModel {
    OpenAiModel::new(OpenAiConfig::new(base_url).with_api_key("sk-test-key").with_timeout(Duration::from_secs(5)))
}

/// Fails the test instead of hanging it.
async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), future).await.expect("the test took too long")
}

/// Every event until the end, and the error the stream ended with, if any.
async fn drain(stream: &mut Box<dyn ModelStream>) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut events = Vec::new();
    while let Some(next) = within(stream.next_event()).await {
        match next {
            Ok(event) => events.push(event),
            Err(error) => {
                assert!(within(stream.next_event()).await.is_none(), "a stream ends after its error");
                return (events, Some(error));
            }
        }
    }
    (events, None)
}

async fn run(base_url: &str, request: ModelRequest) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut stream = within(model(base_url).stream(request)).await.expect("the request succeeds");
    drain(&mut stream).await
}

fn start(index: usize, id: &str, name: &str) -> ModelEvent {
    ModelEvent::ToolCallStart { index, id: id.to_owned(), name: name.to_owned() }
}

fn args(index: usize, fragment: &str) -> ModelEvent {
    ModelEvent::ToolCallArguments { index, fragment: fragment.to_owned() }
}

fn end(index: usize) -> ModelEvent {
    ModelEvent::ToolCallEnd { index }
}

fn text(text: &str) -> ModelEvent {
    ModelEvent::TextDelta(text.to_owned())
}

/// The concatenated argument fragments of call `index`.
fn arguments_of(events: &[ModelEvent], index: usize) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::ToolCallArguments { index: at, fragment } if *at == index => Some(fragment.as_str()),
            _ => None,
        })
        .collect()
}

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
    assert_eq!(events, vec![text("Hello"), text(", wörld"), text(" — done.")]);
    let recorded = server.await.unwrap();
    assert_eq!(recorded.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(recorded.header("authorization"), Some("Bearer sk-test-key"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(recorded.header("accept"), Some("text/event-stream"));
    assert_eq!(
        recorded.body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You write files."},
                {"role": "user", "content": "Make index.html, please."},
            ],
            "stream": true,
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
    assert_eq!(events, vec![start(0, "call_late", "read_file"), args(0, "{\"pa"), args(0, "th\":\"a\"}"), end(0)]);
}

#[tokio::test]
async fn a_finish_reason_without_done_is_a_complete_response() {
    let body = [delta(json!({"content": "ok"})), finish("stop")].concat();
    let reply = Reply { framing: Framing::Close, ..Reply::events(cut_every(&body, 9)) };
    let (base_url, _server) = serve(reply).await;

    assert_eq!(run(&base_url, request(vec![])).await, (vec![text("ok")], None));
}

#[tokio::test]
async fn no_api_key_sends_no_authorization_and_extra_headers_are_sent() {
    let body = [delta(json!({"content": "hi"})), finish("stop"), DONE.to_owned()].concat();
    let (base_url, server) = serve(Reply::events(cut_every(&body, 50))).await;
    let model = OpenAiModel::new(OpenAiConfig::new(&base_url).with_header("X-Title", "hooks tests"));

    let mut stream = within(model.stream(request(vec![]))).await.unwrap();
    assert_eq!(drain(&mut stream).await, (vec![text("hi")], None));

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
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(model(&base_url).stream(request(vec![]))).await.err();

    assert_eq!(
        error,
        Some(ModelError::Http { status: 401, message: "Incorrect API key provided: sk-test***".to_owned() })
    );
}

#[tokio::test]
async fn http_500_with_a_text_body_is_an_http_error_with_the_text() {
    let reply = Reply {
        status: "502 Bad Gateway",
        content_type: "text/html",
        framing: Framing::Close,
        steps: vec![Step::Send(b"<html>upstream down</html>\n".to_vec())],
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(model(&base_url).stream(request(vec![]))).await.err();

    assert_eq!(error, Some(ModelError::Http { status: 502, message: "<html>upstream down</html>".to_owned() }));
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
    assert!(matches!(error, Some(ModelError::Transport(_))), "{error:?}");
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

    let Some(ModelError::Transport(message)) = error else { panic!("expected Transport, got {error:?}") };
    assert!(message.to_lowercase().contains("connection refused"), "{message}");
    assert!(!message.contains("sk-test-key"), "{message}");
}

#[tokio::test]
async fn a_json_answer_to_a_streaming_request_is_malformed_and_says_what_it_got() {
    let body = r#"{"error":{"message":"streaming is not supported"}}"#;
    let reply = Reply {
        status: "200 OK",
        content_type: "application/json",
        framing: Framing::Length,
        steps: vec![Step::Send(body.as_bytes().to_vec())],
    };
    let (base_url, _server) = serve(reply).await;

    let error = within(model(&base_url).stream(request(vec![]))).await.err();

    let Some(ModelError::Malformed(message)) = error else { panic!("expected Malformed, got {error:?}") };
    assert!(message.contains("text/event-stream"), "{message}");
    assert!(message.contains("streaming is not supported"), "{message}");
}
