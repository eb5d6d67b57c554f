//! Helpers shared by the conformance tests of the context (C, R) and message (M) clauses.

#![allow(dead_code)]

use std::io;
use std::sync::{Arc, Mutex, Once, PoisonError};

use hooks_runtime::model::{ModelRequest, ScriptedModel};
use hooks_runtime::prelude::*;

/// Values recorded by hooks, keyed by thread id so that tests running in parallel never read
/// each other's records. A hook is a plain function, so it records into a `static` Recorder.
pub(crate) struct Recorder<T> {
    entries: Mutex<Vec<(String, T)>>,
}

impl<T: Clone> Recorder<T> {
    pub(crate) const fn new() -> Self {
        Recorder { entries: Mutex::new(Vec::new()) }
    }

    pub(crate) fn record(&self, thread_id: &str, value: T) {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).push((thread_id.to_owned(), value));
    }

    /// Every value recorded for `thread_id`, in order.
    pub(crate) fn of(&self, thread_id: &str) -> Vec<T> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(id, _)| id == thread_id)
            .map(|(_, value)| value.clone())
            .collect()
    }
}

/// The text of a stored message, `""` when it has none.
pub(crate) fn text(message: &HookMessage) -> &str {
    message.content.as_deref().unwrap_or_default()
}

/// The texts of stored messages, in order.
pub(crate) fn texts(messages: &[HookMessage]) -> Vec<String> {
    messages.iter().map(|message| text(message).to_owned()).collect()
}

/// `(role, content)` of every message of a provider request, in order.
pub(crate) fn request_lines(request: &ModelRequest) -> Vec<(String, String)> {
    llm_lines(&request.messages)
}

/// `(role, content)` of provider messages, in order.
pub(crate) fn llm_lines(messages: &[LlmMessage]) -> Vec<(String, String)> {
    messages.iter().map(|m| (m.role.to_string(), m.content.clone().unwrap_or_default())).collect()
}

/// Whether a provider request carries a message with exactly this content.
pub(crate) fn request_has(request: &ModelRequest, content: &str) -> bool {
    request.messages.iter().any(|m| m.content.as_deref() == Some(content))
}

/// Fails naming the first request of the model's that a provider would refuse (a tool call
/// without its answer, an answer without its call, ...).
pub(crate) fn assert_requests_valid(model: &ScriptedModel) {
    for (index, request) in model.requests().iter().enumerate() {
        if let Err(reason) = ScriptedModel::check_messages(&request.messages) {
            panic!("request {index} is invalid: {reason}");
        }
    }
}

/// `role(calls: ..)`, `tool(id)` or the role of each message of a request.
pub(crate) fn shape(request: &ModelRequest) -> Vec<String> {
    shape_with(request, |message| message.role.to_string())
}

/// [`shape`], with `plain` writing the messages that neither call nor answer a tool.
pub(crate) fn shape_with(request: &ModelRequest, plain: impl Fn(&LlmMessage) -> String) -> Vec<String> {
    request
        .messages
        .iter()
        .map(|message| match (&message.tool_calls, &message.tool_call_id) {
            (Some(calls), _) => {
                let ids: Vec<&str> =
                    calls.as_array().unwrap().iter().map(|call| call["id"].as_str().unwrap()).collect();
                format!("{}(calls: {})", message.role, ids.join(","))
            }
            (None, Some(id)) => format!("{}({id})", message.role),
            (None, None) => plain(message),
        })
        .collect()
}

/// A buffer that `tracing_subscriber` writes formatted events into.
#[derive(Clone, Default)]
pub(crate) struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl LogBuffer {
    /// Everything logged so far.
    pub(crate) fn contents(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
    }

    /// The logged lines that contain `needle`.
    pub(crate) fn lines_with(&self, needle: &str) -> Vec<String> {
        self.contents().lines().filter(|line| line.contains(needle)).map(str::to_owned).collect()
    }
}

impl io::Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Captures every event of the current thread (use a current_thread runtime) until the guard
/// drops.
///
/// `tracing` caches each callsite's interest process-wide, computed against the subscriber of
/// the thread that reaches the callsite first. A test running in parallel without a subscriber
/// would pin the hook-failure callsite to "never" and this capture would miss it, so a global
/// default that is interested in everything (a bare registry, which writes nothing) is installed
/// once, and the interest cache is rebuilt once the capturing subscriber is in place.
pub(crate) fn capture_logs() -> (LogBuffer, tracing::subscriber::DefaultGuard) {
    capture(tracing_subscriber::fmt::format::FmtSpan::NONE)
}

/// [`capture_logs`], with a line for each span as it closes, its fields as last recorded.
pub(crate) fn capture_logs_with_spans() -> (LogBuffer, tracing::subscriber::DefaultGuard) {
    capture(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
}

fn capture(spans: tracing_subscriber::fmt::format::FmtSpan) -> (LogBuffer, tracing::subscriber::DefaultGuard) {
    static GLOBAL: Once = Once::new();
    GLOBAL.call_once(|| {
        let _ = tracing::subscriber::set_global_default(tracing_subscriber::registry());
    });
    let buffer = LogBuffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(spans)
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    tracing::callsite::rebuild_interest_cache();
    (buffer, guard)
}
