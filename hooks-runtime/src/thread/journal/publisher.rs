//! Scale-out: a thread's events on their way to the store
//! ([`EventLog::publish_events`](crate::store::EventLog::publish_events)), one task per
//! thread so they keep their order, off the path of the run that emitted them.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::events::ThreadEvent;
use crate::store::MessageStore;

enum Item {
    Event(ThreadEvent),
    /// Answered once every event queued before it has been handed to the store.
    Flush(oneshot::Sender<()>),
}

/// The queue of one thread's events to publish.
pub(crate) struct Publisher {
    queue: mpsc::UnboundedSender<Item>,
}

impl Publisher {
    /// Starts the thread's publishing task on the current tokio runtime.
    pub(crate) fn start(store: Arc<dyn MessageStore>, thread_id: String) -> Self {
        let (queue, mut items) = mpsc::unbounded_channel::<Item>();
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    let mut batch = Vec::new();
                    while let Some(item) = items.recv().await {
                        // Everything queued meanwhile goes in one write.
                        let mut flushes = Vec::new();
                        let mut next = Some(item);
                        while let Some(item) = next {
                            match item {
                                Item::Event(event) => batch.push(event),
                                Item::Flush(done) => flushes.push(done),
                            }
                            next = items.try_recv().ok();
                        }
                        if !batch.is_empty()
                            && let Some(log) = store.event_log()
                            && let Err(error) = log.publish_events(&thread_id, &batch).await
                        {
                            tracing::error!(target: "hooks_runtime::thread", thread = %thread_id, "could not publish {} thread events to the store: {error}", batch.len());
                        }
                        batch.clear();
                        for done in flushes {
                            let _ = done.send(());
                        }
                    }
                });
            }
            Err(_) => {
                tracing::error!(target: "hooks_runtime::thread", thread = %thread_id, "thread events are not published: no tokio runtime")
            }
        }
        Publisher { queue }
    }

    /// Queues an event.
    pub(crate) fn send(&self, event: ThreadEvent) {
        let _ = self.queue.send(Item::Event(event));
    }

    /// Waits until every event queued so far is published (or failed to be).
    pub(crate) async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.queue.send(Item::Flush(done)).is_ok() {
            // An error means the task is gone (no runtime): nothing will be published.
            let _ = flushed.await;
        }
    }
}
