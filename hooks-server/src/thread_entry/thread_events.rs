//! A thread's event stream on this server: its log, the channel of the server's own events into
//! it, and the writer task that fills it (see [`EventLogWriter`]), which stops with it.

use std::sync::{Arc, PoisonError};

use hooks_runtime::Thread;
use hooks_runtime::store::{EventSubscription, MessageStore};
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use crate::dto::events::StreamEvent;
use crate::event_log::EventLog;
use crate::event_log_writer::{EventLogWriter, RemoteStatus, Running, ServerEvent};
use crate::hook_runs::HookRuns;

/// The event log of one thread and what feeds it.
pub(crate) struct ThreadEvents {
    pub(crate) log: Arc<EventLog>,
    server_events: mpsc::UnboundedSender<ServerEvent>,
    /// The status a run of another process left, while it is the latest (see [`EventLogWriter`]).
    remote_status: RemoteStatus,
    /// The store, when the log follows its events (see [`EventLogWriter`]).
    events_store: Option<Arc<dyn MessageStore>>,
    /// The writer's task, stopped with the log.
    writer: tokio::task::AbortHandle,
    /// Where the hook-run layer sends this thread's hook runs, while the log lives.
    hook_runs: Option<HookRuns>,
    thread_id: String,
}

impl ThreadEvents {
    /// Starts the writer of `thread`'s log: its runtime events (subscribed now, before anyone
    /// can send to the thread, so no event of a run is missed), the server's own events, and,
    /// with `store_events`, the store's events from `start_seq` on.
    pub(crate) fn start(
        thread: &Thread,
        retention: usize,
        store: Option<(EventSubscription, u64, Arc<dyn MessageStore>)>,
        hook_runs: Option<HookRuns>,
    ) -> Self {
        let thread_id = thread.id().to_owned();
        let log = Arc::new(EventLog::new(retention));
        let (server_events, server_rx) = mpsc::unbounded_channel();
        if let Some(runs) = &hook_runs {
            runs.register(&thread_id, server_events.clone());
        }
        let remote_status = RemoteStatus::default();
        let (store_events, start_seq, events_store) = match store {
            Some((subscription, start_seq, store)) => (Some(subscription), start_seq, Some(store)),
            None => (None, 0, None),
        };
        let writer = EventLogWriter {
            thread_id: thread_id.clone(),
            runtime_events: thread.subscribe_unbounded(),
            server_events: server_rx,
            store_events,
            start_seq,
            log: log.clone(),
            remote_status: remote_status.clone(),
            _running: Running::start(),
        };
        let writer = tokio::spawn(writer.run()).abort_handle();
        ThreadEvents { log, server_events, remote_status, events_store, writer, hook_runs, thread_id }
    }

    /// The status the store's latest status event set, while it is the latest.
    pub(crate) fn remote_status(&self) -> Option<Map<String, Value>> {
        self.remote_status.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Logs a server event after every runtime event already emitted (with a store that
    /// carries events: after every event the store has for the thread now), and waits until
    /// it is.
    pub(crate) async fn log_in_order(&self, event: StreamEvent) {
        let (done, logged) = oneshot::channel();
        let message = match &self.events_store {
            Some(store) => match store
                .event_log()
                .expect("kept only for a store with an event log")
                .latest_event_seq(&self.thread_id)
                .await
            {
                Ok(seq) => ServerEvent::AfterSeq { event, seq, done },
                Err(error) => {
                    tracing::warn!(target: "hooks_server", thread = %self.thread_id, "placing a server event among the store's: {error}");
                    ServerEvent::Ordered(event, Some(done))
                }
            },
            None => ServerEvent::Ordered(event, Some(done)),
        };
        if self.server_events.send(message).is_ok() {
            let _ = logged.await;
        }
    }
}

impl Drop for ThreadEvents {
    fn drop(&mut self) {
        self.writer.abort();
        if let Some(runs) = &self.hook_runs {
            runs.unregister(&self.thread_id, &self.server_events);
        }
    }
}
