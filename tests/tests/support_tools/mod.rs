//! Helpers shared by the tool-call, error, user-scope, declarative and concurrency suites.
#![allow(dead_code)]

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hooks_runtime::prelude::*;
use hooks_runtime::{Thread, ThreadEvent};

/// Locks a mutex, ignoring poisoning: a hook that panicked must not take the test down with it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Owned argument fragments for `then_tool_call_in_fragments`.
pub(crate) fn fragments(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|part| (*part).to_owned()).collect()
}

/// The stored tool messages of a thread, oldest first.
pub(crate) async fn tool_messages(thread: &Thread) -> Vec<HookMessage> {
    thread.messages().await.expect("messages").into_iter().filter(|message| message.role == Role::Tool).collect()
}

/// The stored tool message answering `call_id`.
pub(crate) async fn tool_message(thread: &Thread, call_id: &str) -> HookMessage {
    let messages = tool_messages(thread).await;
    let mut matching = messages.iter().filter(|message| message.tool_call_id.as_deref() == Some(call_id));
    let message = matching.next().unwrap_or_else(|| panic!("no tool message for {call_id}: {messages:#?}")).clone();
    assert!(matching.next().is_none(), "two tool messages for {call_id}");
    message
}

/// Every event received so far, without waiting.
pub(crate) fn drain(receiver: &mut tokio::sync::broadcast::Receiver<ThreadEvent>) -> Vec<ThreadEvent> {
    let mut events = Vec::new();
    while let Ok(event) = receiver.try_recv() {
        events.push(event);
    }
    events
}

/// Only the tool events of a list.
pub(crate) fn tool_events(events: Vec<ThreadEvent>) -> Vec<ThreadEvent> {
    events
        .into_iter()
        .filter(|event| matches!(event, ThreadEvent::ToolCallStarted { .. } | ThreadEvent::ToolCallDone { .. }))
        .collect()
}

/// Captures everything `tracing` logs on the current thread while the guard lives, at every
/// level, without colours. Use on a current-thread tokio runtime so every task logs here.
pub(crate) struct LogCapture {
    buffer: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

impl LogCapture {
    pub(crate) fn start() -> Self {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer_buffer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || BufferWriter(writer_buffer.clone()))
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        LogCapture { buffer, _guard: guard }
    }

    /// A capture of events only: no span is enabled, so hook dispatch takes the path it takes
    /// when nobody traces hooks (hook spans are built only when someone listens for them).
    pub(crate) fn events_only() -> Self {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::{Layer, filter};
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer_buffer = buffer.clone();
        let layer = tracing_subscriber::fmt::layer()
            .with_ansi(false)
            .with_writer(move || BufferWriter(writer_buffer.clone()))
            .with_filter(filter::filter_fn(|metadata| metadata.is_event()));
        let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
        LogCapture { buffer, _guard: guard }
    }

    /// Everything logged so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.buffer)).into_owned()
    }

    /// The `[Hooks] ✗` lines logged so far.
    pub(crate) fn failure_lines(&self) -> Vec<String> {
        self.text().lines().filter(|line| line.contains("[Hooks] ✗")).map(str::to_owned).collect()
    }
}

struct BufferWriter(Arc<Mutex<Vec<u8>>>);

impl io::Write for BufferWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Returns once every task of this paused-time runtime waits: a deterministic point at which
/// "X did not happen" can be checked.
///
/// Only for `#[tokio::test(start_paused = true)]` (a current-thread runtime): its clock moves,
/// and so this timer fires, only when no task can make progress (a `spawn_blocking` call, such
/// as a SQLite write, holds the clock too). Whatever the other tasks could do before waiting on
/// something that never comes has then been done; no wall-clock time passes. One second of the
/// paused clock: a task polling on a timer (an abort poll every 10 ms) wakes at each of its
/// ticks on the way, so a longer wait only costs more of them.
pub(crate) async fn until_every_task_waits() {
    assert!(
        tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread,
        "until_every_task_waits needs a paused current-thread runtime"
    );
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
}

/// A subscriber that notifies `Notify` each time an event whose message contains `fragment` is
/// logged: a test awaits a point the code under test logs (`"this run waits for its end"`)
/// rather than sleeping until it has probably passed. Attach it to the future that logs it
/// (`tracing::instrument::WithSubscriber::with_subscriber`), which works on any worker.
pub(crate) fn log_signal(fragment: &'static str) -> (tracing::Dispatch, Arc<tokio::sync::Notify>) {
    use tracing_subscriber::layer::SubscriberExt;
    let notify = Arc::new(tokio::sync::Notify::new());
    let layer = LogSignal { fragment, notify: notify.clone() };
    (tracing::Dispatch::new(tracing_subscriber::registry().with(layer)), notify)
}

struct LogSignal {
    fragment: &'static str,
    notify: Arc<tokio::sync::Notify>,
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for LogSignal {
    fn on_event(&self, event: &tracing::Event<'_>, _context: tracing_subscriber::layer::Context<'_, S>) {
        struct Message(String);
        impl tracing::field::Visit for Message {
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if field.name() == "message" {
                    self.0 = format!("{value:?}");
                }
            }
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        if message.0.contains(self.fragment) {
            self.notify.notify_one();
        }
    }
}
