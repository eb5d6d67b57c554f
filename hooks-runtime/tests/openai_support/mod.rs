//! The hand-written HTTP/1.1 server on 127.0.0.1 the `OpenAiModel` tests talk to, and the
//! event-stream text and helpers they share.

// Each test file uses a different subset of these helpers.
#![allow(dead_code)]

use std::time::Duration;

use hooks_core::LlmMessage;
use hooks_runtime::model::{
    FinishReason, Model, ModelError, ModelEvent, ModelRequest, ModelStream, OpenAiConfig, OpenAiModel, ToolSpec, Usage,
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
pub(crate) enum Step {
    /// Writes these bytes (one HTTP chunk when the body is chunked), then pauses briefly so the
    /// client sees them as a separate network read.
    Send(Vec<u8>),
    /// Waits until the test says go on.
    WaitFor(oneshot::Receiver<()>),
    /// Writes these bytes (one HTTP chunk when the body is chunked) again and again, with this
    /// pause before each, until the client hangs up.
    Trickle(Vec<u8>, Duration),
    /// Stops answering but keeps the connection open.
    Hang,
    /// Drops the connection on the spot.
    Drop,
}

/// How the response body is delimited.
#[derive(Clone, Copy)]
pub(crate) enum Framing {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// `Connection: close` and no length: the body ends when the connection does.
    Close,
    /// `Content-Length` of everything the steps send.
    Length,
}

pub(crate) struct Reply {
    pub(crate) status: &'static str,
    pub(crate) content_type: &'static str,
    pub(crate) framing: Framing,
    pub(crate) steps: Vec<Step>,
    /// More header lines, each ending in `\r\n`.
    pub(crate) headers: &'static str,
}

impl Reply {
    pub(crate) fn events(steps: Vec<Step>) -> Self {
        Reply { status: "200 OK", content_type: "text/event-stream", framing: Framing::Chunked, steps, headers: "" }
    }
}

/// A request as the server received it.
#[derive(Debug)]
pub(crate) struct Recorded {
    pub(crate) request_line: String,
    /// Header names in lower case.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

impl Recorded {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

/// Serves one request with `reply`; the handle yields the request.
pub(crate) async fn serve(reply: Reply) -> (String, JoinHandle<Recorded>) {
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

/// Serves one request per reply, in order, each on its own connection; the handle yields the
/// requests and when each arrived.
pub(crate) async fn serve_each(replies: Vec<Reply>) -> (String, JoinHandle<Vec<(Recorded, std::time::Instant)>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = tokio::spawn(async move {
        let mut recorded = Vec::new();
        for reply in replies {
            let (mut socket, _) = listener.accept().await.unwrap();
            recorded.push((read_request(&mut socket).await, std::time::Instant::now()));
            answer(&mut socket, reply).await;
        }
        recorded
    });
    (base_url, handle)
}

/// A reply with this status, headers and body, its length given.
pub(crate) fn status_reply(status: &'static str, headers: &'static str, body: &str) -> Reply {
    Reply {
        status,
        content_type: "application/json",
        framing: Framing::Length,
        steps: vec![Step::Send(body.as_bytes().to_vec())],
        headers,
    }
}

pub(crate) async fn read_request(socket: &mut TcpStream) -> Recorded {
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

pub(crate) async fn answer(socket: &mut TcpStream, reply: Reply) {
    // A client that gave up (as the limit tests expect it to) makes a write fail: the answer ends.
    let _ = try_answer(socket, reply).await;
}

async fn try_answer(socket: &mut TcpStream, reply: Reply) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {}\r\nContent-Type: {}\r\n{}", reply.status, reply.content_type, reply.headers);
    // Every connection answers one request: a retry opens a new one.
    head.push_str("Connection: close\r\n");
    match reply.framing {
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::Close => {}
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
    socket.write_all(head.as_bytes()).await?;
    socket.flush().await?;
    for step in reply.steps {
        match step {
            Step::Send(bytes) => {
                write_piece(socket, reply.framing, &bytes).await?;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            Step::Trickle(bytes, every) => loop {
                tokio::time::sleep(every).await;
                write_piece(socket, reply.framing, &bytes).await?;
            },
            Step::WaitFor(go_on) => go_on.await.unwrap(),
            Step::Hang => std::future::pending::<()>().await,
            Step::Drop => return Ok(()),
        }
    }
    if let Framing::Chunked = reply.framing {
        socket.write_all(b"0\r\n\r\n").await?;
    }
    socket.shutdown().await
}

/// Writes one piece of the body, as one HTTP chunk when the body is chunked.
async fn write_piece(socket: &mut TcpStream, framing: Framing, bytes: &[u8]) -> std::io::Result<()> {
    if let Framing::Chunked = framing {
        socket.write_all(format!("{:x}\r\n", bytes.len()).as_bytes()).await?;
        socket.write_all(bytes).await?;
        socket.write_all(b"\r\n").await?;
    } else {
        socket.write_all(bytes).await?;
    }
    socket.flush().await
}

// ---------------------------------------------------------------------------------------------
// Event-stream text and helpers
// ---------------------------------------------------------------------------------------------

/// One `data:` event holding a chat-completion chunk with this first choice.
pub(crate) fn event(choice: Value) -> String {
    let chunk = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [choice],
    });
    format!("data: {chunk}\n\n")
}

pub(crate) fn delta(delta: Value) -> String {
    event(json!({"index": 0, "delta": delta, "finish_reason": null}))
}

pub(crate) fn finish(reason: &str) -> String {
    event(json!({"index": 0, "delta": {}, "finish_reason": reason}))
}

pub(crate) fn tool_delta(calls: Value) -> String {
    delta(json!({"tool_calls": calls}))
}

pub(crate) const DONE: &str = "data: [DONE]\n\n";

/// The text cut into network writes of `size` bytes, so lines, JSON strings, escapes and UTF-8
/// characters are all split somewhere.
pub(crate) fn cut_every(text: &str, size: usize) -> Vec<Step> {
    text.as_bytes().chunks(size).map(|piece| Step::Send(piece.to_vec())).collect()
}

/// The text cut into network writes right after each of `markers` (in order of appearance).
pub(crate) fn cut_after(text: &str, markers: &[&str]) -> Vec<Step> {
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

pub(crate) fn request(tools: Vec<ToolSpec>) -> ModelRequest {
    ModelRequest::new(
        "gpt-test",
        vec![LlmMessage::new("system", "You write files."), LlmMessage::new("user", "Make index.html, please.")],
        tools,
    )
}

pub(crate) fn write_file_tool() -> ToolSpec {
    ToolSpec::new(
        "write_file",
        "Writes a file.",
        json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        }),
    )
}

/// The model most tests use: no retries, since [`serve`] answers one request (the retry tests
/// use [`serve_each`]).
pub(crate) fn model(base_url: &str) -> OpenAiModel {
    OpenAiModel::new(
        OpenAiConfig::new(base_url)
            .with_api_key("sk-test-key")
            .with_timeout(Duration::from_secs(5))
            .with_max_retries(0),
    )
}

/// Fails the test instead of hanging it.
pub(crate) async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), future).await.expect("the test took too long")
}

/// Every event until the end, and the error the stream ended with, if any.
pub(crate) async fn drain(stream: &mut Box<dyn ModelStream>) -> (Vec<ModelEvent>, Option<ModelError>) {
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

pub(crate) async fn run(base_url: &str, request: ModelRequest) -> (Vec<ModelEvent>, Option<ModelError>) {
    run_with(&model(base_url), request).await
}

pub(crate) async fn run_with(model: &OpenAiModel, request: ModelRequest) -> (Vec<ModelEvent>, Option<ModelError>) {
    let mut stream = within(model.stream(request)).await.expect("the request succeeds");
    drain(&mut stream).await
}

pub(crate) fn start(index: usize, id: &str, name: &str) -> ModelEvent {
    ModelEvent::ToolCallStart { index, id: id.to_owned(), name: name.to_owned() }
}

pub(crate) fn args(index: usize, fragment: &str) -> ModelEvent {
    ModelEvent::ToolCallArguments { index, fragment: fragment.to_owned() }
}

pub(crate) fn end(index: usize) -> ModelEvent {
    ModelEvent::ToolCallEnd { index }
}

pub(crate) fn finished(reason: FinishReason) -> ModelEvent {
    ModelEvent::Finished(reason)
}

pub(crate) fn usage(prompt: u64, completion: u64, total: u64) -> ModelEvent {
    ModelEvent::Usage(Usage::new(prompt, completion, total))
}

pub(crate) fn text(text: &str) -> ModelEvent {
    ModelEvent::TextDelta(text.to_owned())
}

/// The concatenated argument fragments of call `index`.
pub(crate) fn arguments_of(events: &[ModelEvent], index: usize) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            ModelEvent::ToolCallArguments { index: at, fragment } if *at == index => Some(fragment.as_str()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------------------------

/// Log lines captured while the returned guard lives (the current thread only, where
/// `#[tokio::test]` runs everything), spans' closing lines (with their fields) included.
#[derive(Clone, Default)]
pub(crate) struct Logs(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Logs {
    pub(crate) fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        // A global subscriber that wants every event up to INFO and writes nothing: without it,
        // a call site first reached while no test's subscriber is alive (tests run in parallel)
        // caches "never", and a later test's capture misses that line.
        static GLOBAL: std::sync::Once = std::sync::Once::new();
        GLOBAL.call_once(|| {
            let sink =
                tracing_subscriber::fmt().with_max_level(tracing::Level::INFO).with_writer(std::io::sink).finish();
            let _ = tracing::subscriber::set_global_default(sink);
        });
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .without_time()
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// The lines at WARN.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.text().lines().filter(|line| line.trim_start().starts_with("WARN")).map(str::to_owned).collect()
    }
}

impl std::io::Write for Logs {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
