//! The task that fills a thread's event log: the runtime's events, the server's own events
//! (runs starting and finishing, hook runs) in their place among them, and, when the store
//! carries events between processes, the events of runs in other processes.
//!
//! With a store that carries events ([`MessageStore::event_log`]) the store is the one
//! source of the runtime's events, this process's included: the log takes them from the
//! subscription, which delivers each `seq` once and in order, also across lost connections,
//! and ignores the copies the runtime hands this process directly. So no event is shown twice
//! and none is skipped, whatever failed on the way. A server event that must follow the
//! runtime's events so far (`run_started`, `run_finished`) carries the store's latest `seq` at
//! the time ([`ServerEvent::AfterSeq`]) and waits until the log has reached it (at most
//! [`HOLD_MAX`], in case the store stays unreachable). Every server event, `hook_run` and
//! `messages_filtered` included, also waits until the events this process emitted before it have
//! come back from the store (the writer keeps them, in order, until their stored copy arrives), so
//! it lands after them in every process's order, not ahead of them. Without such a store the
//! runtime's events are logged as the runtime emits them.
//!
//! [`MessageStore::event_log`]: hooks_runtime::store::MessageStore::event_log

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hooks_runtime::ThreadEvent;
use hooks_runtime::store::{EventSubscription, StoredEvent};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use crate::dto::events::StreamEvent;
use crate::event_log::EventLog;

/// How long a server event waits for the store's events before it: past this (the store is
/// unreachable), it is logged anyway.
const HOLD_MAX: Duration = Duration::from_secs(30);

/// Event log writers running in this process, every router included; see
/// `running_event_log_writers`.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// How many threads' event log writers run in this process now. For tests of eviction (feature
/// `__private`).
#[cfg(feature = "__private")]
pub fn running_event_log_writers() -> usize {
    RUNNING.load(Ordering::Relaxed)
}

/// Counts a writer from its creation until its task ends or is aborted.
pub(crate) struct Running;

impl Running {
    pub(crate) fn start() -> Self {
        RUNNING.fetch_add(1, Ordering::Relaxed);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A message to a thread's event log writer from the server itself.
pub(crate) enum ServerEvent {
    /// Log this event once every runtime event before it is logged, then say so.
    Ordered(StreamEvent, Option<oneshot::Sender<()>>),
    /// With a store that carries events: log this event once the store's events up to `seq`
    /// are logged, then say so. Without one, as [`ServerEvent::Ordered`].
    AfterSeq { event: StreamEvent, seq: u64, done: oneshot::Sender<()> },
}

/// The status the store's latest status event set, while it is the latest; `None` while the
/// latest one is this process's own in a log without a store that carries events (the thread
/// handle knows it then).
pub(crate) type RemoteStatus = Arc<Mutex<Option<Map<String, Value>>>>;

/// What a thread's event log writer reads and where it writes.
pub(crate) struct EventLogWriter {
    pub(crate) thread_id: String,
    /// Every event of the thread in this runtime ([`Thread::subscribe_unbounded`]: none is ever
    /// missed, and an idle thread holds no channel slots for the writer).
    ///
    /// [`Thread::subscribe_unbounded`]: hooks_runtime::Thread::subscribe_unbounded
    pub(crate) runtime_events: mpsc::UnboundedReceiver<ThreadEvent>,
    pub(crate) server_events: mpsc::UnboundedReceiver<ServerEvent>,
    /// The store's events of this thread, from every process; `None` for a store of one process.
    pub(crate) store_events: Option<EventSubscription>,
    /// The store's latest `seq` just after the subscription started: server events waiting for
    /// no later `seq` need not wait.
    pub(crate) start_seq: u64,
    pub(crate) log: Arc<EventLog>,
    pub(crate) remote_status: RemoteStatus,
    /// Counted among the `running_event_log_writers` while the writer exists.
    pub(crate) _running: Running,
}

/// A server event waiting for the store's events up to `seq` (`None`: only for those before it).
struct Held {
    event: StreamEvent,
    seq: Option<u64>,
    /// How many of this process's events must have come back from the store first.
    after_local: u64,
    done: Option<oneshot::Sender<()>>,
    since: Instant,
}

impl EventLogWriter {
    /// Runs until the thread's runtime events end (or the task is aborted: the entry was evicted).
    pub(crate) async fn run(mut self) {
        let mut logged_seq = self.start_seq;
        let mut held: VecDeque<Held> = VecDeque::new();
        let mut local = InFlight::default();
        loop {
            let hold_deadline = held.front().map(|first| tokio::time::Instant::from_std(first.since + HOLD_MAX));
            tokio::select! {
                // Runtime events first: an event the runtime emitted before a server event was
                // sent is already in this channel when the server event is looked at.
                biased;
                received = self.runtime_events.recv() => match received {
                    // The store's copy is the one logged; this one marks where it will be.
                    Some(event) if self.store_events.is_some() => local.push(&event),
                    Some(event) => {
                        self.log.push(&event);
                        if matches!(event, ThreadEvent::Status { .. }) {
                            *self.remote_status.lock().unwrap_or_else(PoisonError::into_inner) = None;
                        }
                    }
                    None => break,
                },
                Some(message) = self.server_events.recv() => {
                    let (event, seq, done) = match message {
                        ServerEvent::Ordered(event, done) => (event, None, done),
                        ServerEvent::AfterSeq { event, seq, done } => (event, Some(seq), Some(done)),
                    };
                    held.push_back(Held { event, seq, after_local: local.emitted, done, since: Instant::now() });
                    self.release(&mut held, logged_seq, &local);
                }
                stored = next_stored(&mut self.store_events) => match stored {
                    Some(Ok(stored)) => {
                        logged_seq = logged_seq.max(stored.seq);
                        local.stored(&stored.event);
                        self.stored(stored);
                        self.release(&mut held, logged_seq, &local);
                    }
                    Some(Err(error)) => {
                        // The subscription reads on from its last event itself.
                        tracing::warn!(target: "hooks_server", thread = %self.thread_id, "following the store's events: {error}");
                    }
                    None => {
                        tracing::warn!(target: "hooks_server", thread = %self.thread_id, "the store's event subscription ended; the log takes this process's events directly from now on");
                        self.store_events = None;
                        self.release(&mut held, u64::MAX, &local);
                    }
                },
                () = sleep_until(hold_deadline) => {
                    tracing::warn!(target: "hooks_server", thread = %self.thread_id, "the store's events did not arrive within {HOLD_MAX:?}; logging a server event without them");
                    if let Some(first) = held.front_mut() {
                        first.seq = None;
                        first.after_local = 0;
                    }
                    self.release(&mut held, logged_seq, &local);
                }
            }
        }
    }

    /// Logs the held server events, in order, up to the first that waits for a `seq` not
    /// logged yet.
    fn release(&self, held: &mut VecDeque<Held>, logged_seq: u64, local: &InFlight) {
        let store = self.store_events.is_some();
        while let Some(first) = held.front() {
            if store && (first.seq.is_some_and(|seq| seq > logged_seq) || first.after_local > local.returned) {
                return;
            }
            let Some(first) = held.pop_front() else { return };
            self.log.push(&first.event);
            if let Some(done) = first.done {
                let _ = done.send(());
            }
        }
    }

    /// An event from the store, of this process or another.
    fn stored(&self, stored: StoredEvent) {
        self.log.push(&stored.event);
        if stored.event["type"] == "status"
            && let Value::Object(mut status) = stored.event
        {
            status.remove("type");
            *self.remote_status.lock().unwrap_or_else(PoisonError::into_inner) = Some(status);
        }
    }
}

/// This process's runtime events on their way through the store: each is logged when its stored
/// copy arrives, and a server event emitted after it waits for that.
#[derive(Default)]
struct InFlight {
    /// The events emitted here and not yet back from the store, in order.
    waiting: VecDeque<Value>,
    /// How many events this process emitted.
    emitted: u64,
    /// How many of them came back (or were settled by a later one that did).
    returned: u64,
}

impl InFlight {
    /// An event this process emitted. One that does not serialize is never stored either (the
    /// publisher writes JSON): nothing to wait for.
    fn push(&mut self, event: &ThreadEvent) {
        if let Ok(value) = serde_json::to_value(event) {
            self.waiting.push_back(value);
            self.emitted += 1;
        }
    }

    /// A stored event: one of this process's, or another process's. This process's come back in
    /// the order they were emitted, so one that matches a waiting event also settles the ones
    /// before it (their writes failed for good; they will not come back).
    fn stored(&mut self, event: &Value) {
        if let Some(place) = self.waiting.iter().position(|waiting| waiting == event) {
            self.waiting.drain(..=place);
            self.returned += place as u64 + 1;
        }
    }
}

/// Waits until `deadline`, or forever without one.
async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The next event of the subscription, or never when there is none.
async fn next_stored(
    subscription: &mut Option<EventSubscription>,
) -> Option<Result<StoredEvent, hooks_runtime::store::StoreError>> {
    match subscription {
        Some(subscription) => subscription.next().await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_log::Read;
    use hooks_runtime::store::ThreadStatus;

    fn tool_done(id: &str) -> ThreadEvent {
        ThreadEvent::ToolCallDone {
            id: id.into(),
            name: "lookup".into(),
            status: hooks_runtime::types::ToolStatus::Success,
            denied: false,
            interrupted: false,
        }
    }

    struct Harness {
        runtime: mpsc::UnboundedSender<ThreadEvent>,
        server: mpsc::UnboundedSender<ServerEvent>,
        store: mpsc::Sender<Result<StoredEvent, hooks_runtime::store::StoreError>>,
        log: Arc<EventLog>,
    }

    /// A writer following a store (fed by hand) that started after `start_seq`.
    fn start(start_seq: u64) -> Harness {
        let (runtime, runtime_events) = mpsc::unbounded_channel();
        let (server, server_events) = mpsc::unbounded_channel();
        let (store, stored) = mpsc::channel(64);
        let subscription = EventSubscription::new(stored, tokio::spawn(std::future::pending()));
        let log = Arc::new(EventLog::new(100));
        let writer = EventLogWriter {
            thread_id: "t1".into(),
            runtime_events,
            server_events,
            store_events: Some(subscription),
            start_seq,
            log: log.clone(),
            remote_status: RemoteStatus::default(),
            _running: Running::start(),
        };
        tokio::spawn(writer.run());
        Harness { runtime, server, store, log }
    }

    fn run_started() -> StreamEvent {
        StreamEvent::RunStarted { run_id: "r".into(), at_us: 0 }
    }

    fn run_finished() -> StreamEvent {
        let end = crate::dto::events::RunEnd::Ran { steps: 1, status: ThreadStatus::Idle, blocked: None };
        StreamEvent::RunFinished { run_id: "r".into(), end, at_us: 0 }
    }

    fn hook_run() -> StreamEvent {
        let timing = crate::dto::events::Timing { run_id: "r".into(), started_at_us: 0, duration_us: 1 };
        let (hook_id, kind, source) = ("h".into(), "filter_messages".into(), "code".into());
        StreamEvent::HookRun { hook_id, kind, source, decision: None, within: None, timing }
    }

    fn stored(seq: u64, event: &ThreadEvent) -> Result<StoredEvent, hooks_runtime::store::StoreError> {
        Ok(StoredEvent::new("t1", seq, serde_json::to_value(event).unwrap()))
    }

    async fn logged(log: &EventLog, count: usize) -> Vec<Value> {
        let mut wake = log.watch();
        loop {
            if let Read::Events(events) = log.read_after(0, 100)
                && events.len() >= count
            {
                return events.iter().map(|event| serde_json::from_str(&event.data).unwrap()).collect();
            }
            tokio::time::timeout(Duration::from_secs(5), wake.changed()).await.expect("logged in time").unwrap();
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_event_the_store_never_got_neither_repeats_nor_reorders_the_ones_after_it() {
        let writer = start(0);
        // The runtime emits three events; the store got the first and the third (the second's
        // write failed for good), each once.
        for id in ["a", "b", "c"] {
            writer.runtime.send(tool_done(id)).unwrap();
        }
        writer.store.send(stored(1, &tool_done("a"))).await.unwrap();
        writer.store.send(stored(2, &tool_done("c"))).await.unwrap();
        let status = ThreadEvent::Status { status: ThreadStatus::Idle };
        writer.runtime.send(status.clone()).unwrap();
        writer.store.send(stored(3, &status)).await.unwrap();
        let events = logged(&writer.log, 3).await;
        let ids: Vec<&str> = events.iter().map(|event| event["id"].as_str().unwrap_or("status")).collect();
        assert_eq!(ids, ["a", "c", "status"]);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(writer.log.latest(), 3, "nothing logged twice");
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_event_waits_for_the_stores_events_up_to_its_seq() {
        let writer = start(4);
        // At or below where the subscription started: logged at once.
        let (done, first) = oneshot::channel();
        writer.server.send(ServerEvent::AfterSeq { event: run_started(), seq: 4, done }).unwrap();
        first.await.unwrap();
        let (done, mut finished) = oneshot::channel();
        writer.server.send(ServerEvent::AfterSeq { event: run_finished(), seq: 6, done }).unwrap();
        // A hook run sent after it keeps its place behind it.
        writer.server.send(ServerEvent::Ordered(hook_run(), None)).unwrap();
        writer.store.send(stored(5, &tool_done("a"))).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(finished.try_recv().is_err(), "logged before the store's event 6");
        writer.store.send(stored(6, &tool_done("b"))).await.unwrap();
        finished.await.unwrap();
        let kinds: Vec<String> =
            logged(&writer.log, 5).await.iter().map(|event| event["type"].as_str().unwrap().to_owned()).collect();
        assert_eq!(kinds, ["run_started", "tool_call_done", "tool_call_done", "run_finished", "hook_run"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_event_lands_after_the_events_this_process_emitted_before_it() {
        let writer = start(0);
        writer.runtime.send(tool_done("a")).unwrap();
        writer.server.send(ServerEvent::Ordered(hook_run(), None)).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(writer.log.latest(), 0, "the hook run waits for the store's copy of `a`");
        // Another process's event does not release it.
        writer.store.send(stored(1, &tool_done("elsewhere"))).await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(writer.log.latest(), 1);
        writer.store.send(stored(2, &tool_done("a"))).await.unwrap();
        let events = logged(&writer.log, 3).await;
        let order: Vec<&str> = events.iter().map(|event| event["id"].as_str().unwrap_or("hook_run")).collect();
        assert_eq!(order, ["elsewhere", "a", "hook_run"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lost_event_of_this_process_holds_no_server_event_once_a_later_one_is_back() {
        let writer = start(0);
        writer.runtime.send(tool_done("lost")).unwrap();
        writer.runtime.send(tool_done("b")).unwrap();
        writer.server.send(ServerEvent::Ordered(hook_run(), None)).unwrap();
        writer.store.send(stored(1, &tool_done("b"))).await.unwrap();
        let events = logged(&writer.log, 2).await;
        let order: Vec<&str> = events.iter().map(|event| event["id"].as_str().unwrap_or("hook_run")).collect();
        assert_eq!(order, ["b", "hook_run"]);
    }
}
