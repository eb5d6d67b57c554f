//! Server-sent event streams over an [`EventLog`]: where a client starts (`Last-Event-ID`, or
//! now), what it is told when events it asked for are gone, and keep-alive.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use tokio::sync::watch;

use crate::dto::events::StreamEvent;
use crate::error::{ApiError, printable};
use crate::event_log::{EventLog, LoggedEvent, Read};

/// How many events one wake-up takes from the log.
const BATCH: usize = 256;

/// Where a stream starts: the `Last-Event-ID` header (what `EventSource` sends when it
/// reconnects), else the `lastEventId` query parameter, else the log's end (only what happens
/// from now on).
pub(crate) fn start_cursor(headers: &HeaderMap, query: Option<&str>, log: &EventLog) -> Result<u64, ApiError> {
    let given = match headers.get("last-event-id") {
        Some(value) => Some(value.to_str().map_err(|_| bad_id("the `Last-Event-ID` header", "?"))?.trim().to_owned()),
        None => query.map(str::to_owned),
    };
    match given {
        None => Ok(log.latest()),
        Some(text) if text.is_empty() => Ok(log.latest()),
        Some(text) => text.parse::<u64>().map_err(|_| bad_id("the last event id", &text)),
    }
}

fn bad_id(what: &str, text: &str) -> ApiError {
    ApiError::bad_request(
        "invalid_last_event_id",
        format!("{what} `{}` is not an event id; event ids are the decimal numbers this stream sent", printable(text)),
    )
}

/// An SSE response that sends every event of `log` after `cursor`, then each new one as it is
/// logged, until the client goes away. `guard` is dropped with the stream: when the client
/// disconnects, however it does.
pub(crate) fn sse<G: Send + 'static>(
    log: Arc<EventLog>,
    cursor: u64,
    keep_alive: std::time::Duration,
    guard: G,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let reader = Reader { wake: log.watch(), log, cursor, pending: VecDeque::new(), _guard: guard };
    let stream = futures_util::stream::unfold(reader, |mut reader| async move {
        let event = reader.next().await?;
        Some((Ok(event), reader))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(keep_alive))
}

struct Reader<G> {
    log: Arc<EventLog>,
    wake: watch::Receiver<u64>,
    cursor: u64,
    pending: VecDeque<Event>,
    _guard: G,
}

impl<G> Reader<G> {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
            }
            // Marked seen before reading: an event logged after the read wakes the wait below.
            self.wake.borrow_and_update();
            match self.log.read_after(self.cursor, BATCH) {
                Read::Events(events) if events.is_empty() => {
                    if self.wake.changed().await.is_err() {
                        return None;
                    }
                }
                Read::Events(events) => self.queue(events),
                Read::Lost { first_missing, kept } => {
                    // No id: the client's last id stays the one it had, and what follows says
                    // which events it will never get.
                    let last_missing = kept.first().map_or(self.log.latest(), |event| event.id - 1);
                    let notice = StreamEvent::EventsLost { count: last_missing + 1 - first_missing };
                    self.pending.push_back(Event::default().data(crate::event_log::to_text(&notice)));
                    self.cursor = last_missing;
                    self.queue(kept);
                }
                Read::Ahead { latest } => {
                    let notice = StreamEvent::StreamReset {
                        reason: "the last event id is past this stream's end; the server restarted",
                        latest: latest.to_string(),
                    };
                    self.pending.push_back(Event::default().data(crate::event_log::to_text(&notice)));
                    self.cursor = 0;
                }
            }
        }
    }

    fn queue(&mut self, events: Vec<LoggedEvent>) {
        if let Some(last) = events.last() {
            self.cursor = last.id;
        }
        self.pending
            .extend(events.into_iter().map(|event| Event::default().id(event.id.to_string()).data(&*event.data)));
    }
}
