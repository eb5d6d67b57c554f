//! A ring buffer of events with ids, one per thread and one per user: what `Last-Event-ID`
//! resumes from. Every connected client reads the one shared log at its own cursor, so a slow
//! client delays nobody and costs no copy of the events.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use tokio::sync::watch;

/// An event's JSON text. The events logged are the server's own DTOs and the runtime's events,
/// whose serialization cannot fail (string keys, no non-finite floats); were one to fail, the
/// log would say so in its place rather than drop it.
pub(crate) fn to_text(event: &impl Serialize) -> String {
    serde_json::to_string(event).unwrap_or_else(|_| r#"{"type":"unserializable_event"}"#.to_owned())
}

/// One logged event: its id (1, 2, 3... per log) and its JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoggedEvent {
    pub(crate) id: u64,
    pub(crate) data: Arc<str>,
}

/// What a reader at a cursor finds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Read {
    /// The events after the cursor (possibly none).
    Events(Vec<LoggedEvent>),
    /// Events after the cursor were dropped from the log; these are the ones still kept.
    Lost { first_missing: u64, kept: Vec<LoggedEvent> },
    /// The cursor is past the last event: it came from another log (a restarted server).
    Ahead { latest: u64 },
}

#[derive(Debug)]
struct Ring {
    events: VecDeque<LoggedEvent>,
    capacity: usize,
    last_id: u64,
}

/// A bounded log of events, and a signal for readers waiting for the next one.
#[derive(Debug)]
pub(crate) struct EventLog {
    ring: Mutex<Ring>,
    latest: watch::Sender<u64>,
}

impl EventLog {
    /// A log that keeps the last `capacity` events (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        EventLog {
            ring: Mutex::new(Ring { events: VecDeque::with_capacity(capacity.min(64)), capacity, last_id: 0 }),
            latest: watch::Sender::new(0),
        }
    }

    /// Appends an event and wakes the readers; returns its id.
    pub(crate) fn push(&self, event: &impl Serialize) -> u64 {
        let data: Arc<str> = to_text(event).into();
        let id = {
            let mut ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
            ring.last_id += 1;
            let id = ring.last_id;
            if ring.events.len() == ring.capacity {
                ring.events.pop_front();
            }
            ring.events.push_back(LoggedEvent { id, data });
            id
        };
        self.latest.send_replace(id);
        id
    }

    /// The id of the last event, 0 before the first.
    pub(crate) fn latest(&self) -> u64 {
        self.ring.lock().unwrap_or_else(PoisonError::into_inner).last_id
    }

    /// How many streams read this log now (each holds a [`EventLog::watch`] receiver).
    pub(crate) fn readers(&self) -> usize {
        self.latest.receiver_count()
    }

    /// A receiver that changes whenever an event is appended.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.latest.subscribe()
    }

    /// The events after `cursor`, at most `max` of them.
    pub(crate) fn read_after(&self, cursor: u64, max: usize) -> Read {
        let ring = self.ring.lock().unwrap_or_else(PoisonError::into_inner);
        if cursor > ring.last_id {
            return Read::Ahead { latest: ring.last_id };
        }
        let oldest = ring.events.front().map_or(ring.last_id + 1, |event| event.id);
        let take = |from: u64| -> Vec<LoggedEvent> {
            // Ids are consecutive, so the position of an id is its distance from the oldest.
            let start = usize::try_from(from.saturating_sub(oldest)).unwrap_or(usize::MAX);
            ring.events.iter().skip(start).take(max).cloned().collect()
        };
        if cursor + 1 < oldest {
            Read::Lost { first_missing: cursor + 1, kept: take(oldest) }
        } else {
            Read::Events(take(cursor + 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids(events: &[LoggedEvent]) -> Vec<u64> {
        events.iter().map(|event| event.id).collect()
    }

    #[test]
    fn reads_after_a_cursor_in_order() {
        let log = EventLog::new(10);
        for n in 0..5 {
            log.push(&json!({ "n": n }));
        }
        assert_eq!(log.latest(), 5);
        let Read::Events(events) = log.read_after(2, 100) else { panic!("expected events") };
        assert_eq!(ids(&events), [3, 4, 5]);
        assert_eq!(&*events[0].data, r#"{"n":2}"#);
        assert_eq!(log.read_after(5, 100), Read::Events(vec![]));
        let Read::Events(events) = log.read_after(0, 2) else { panic!("expected events") };
        assert_eq!(ids(&events), [1, 2]);
    }

    #[test]
    fn a_cursor_older_than_the_retention_is_told_what_was_lost() {
        let log = EventLog::new(3);
        for n in 0..7 {
            log.push(&json!(n));
        }
        match log.read_after(1, 100) {
            Read::Lost { first_missing, kept } => {
                assert_eq!(first_missing, 2);
                assert_eq!(ids(&kept), [5, 6, 7]);
            }
            other => panic!("expected lost events, got {other:?}"),
        }
        // The cursor just before the oldest kept event lost nothing.
        let Read::Events(events) = log.read_after(4, 100) else { panic!("expected events") };
        assert_eq!(ids(&events), [5, 6, 7]);
    }

    #[test]
    fn the_events_lost_notice_has_one_shape() {
        let notice = crate::dto::events::StreamEvent::EventsLost { count: 3 };
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&to_text(&notice)).unwrap(),
            json!({ "type": "events_lost", "count": 3 })
        );
    }

    #[test]
    fn a_cursor_past_the_end_is_ahead() {
        let log = EventLog::new(3);
        log.push(&json!(1));
        assert_eq!(log.read_after(9, 100), Read::Ahead { latest: 1 });
        assert_eq!(EventLog::new(3).read_after(0, 100), Read::Events(vec![]));
    }
}
