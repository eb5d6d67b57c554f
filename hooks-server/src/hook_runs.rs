//! Hook runs on the thread event streams: a `tracing` layer that reads the runtime's hook spans
//! (id, kind, source, duration, and a governing hook's decision) and its failure logs, and sends each to the event log of the
//! thread whose run they belong to, as `hook_run` and `hook_failed` events; and what each
//! `filter_messages` chain did to the request's history, as `messages_filtered`
//! (`{"before", "after"}`: the message counts around the chain).
//!
//! The runtime's spans do not name their thread; the server runs each send inside a
//! `hooks_server_run` span that does, and a hook span's nearest such ancestor is its thread.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::event_log_writer::ServerEvent;

/// The runtime's target for hook spans and hook failure logs.
const HOOK_TARGET: &str = "hooks_runtime::hook";
/// The runtime's span around a `filter_messages` chain, with the message counts.
const FILTER_SPAN: &str = "filter_messages_chain";
/// The span the server runs each send in.
pub(crate) const RUN_SPAN: &str = "hooks_server_run";

/// Where hook runs go: give [`HookRuns::layer`] to your `tracing` subscriber and the same
/// `HookRuns` to [`ServerConfig::hook_runs`](crate::ServerConfig::hook_runs).
///
/// The subscriber must enable INFO spans of the targets `hooks_runtime::hook` and
/// `hooks_server` (the runtime builds no hook span otherwise, and costs nothing then).
///
/// ```
/// use hooks_server::{HookRuns, ServerConfig};
/// use tracing_subscriber::layer::SubscriberExt;
///
/// let runs = HookRuns::new();
/// let subscriber = tracing_subscriber::registry().with(runs.layer());
/// # let _ = subscriber;
/// let config = ServerConfig::default().hook_runs(Some(runs));
/// # let _ = config;
/// ```
#[derive(Clone, Default)]
pub struct HookRuns {
    threads: Arc<Mutex<HashMap<String, mpsc::UnboundedSender<ServerEvent>>>>,
    /// Set once its layer is part of a subscriber, so the inspector can tell a missing layer.
    layered: Arc<AtomicBool>,
}

impl fmt::Debug for HookRuns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("HookRuns").field("threads", &threads).finish()
    }
}

impl HookRuns {
    /// A sink with no threads yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `tracing` layer that feeds this sink.
    pub fn layer(&self) -> HookRunLayer {
        HookRunLayer { runs: self.clone() }
    }

    /// Whether [`HookRuns::layer`] was put in a subscriber (without it nothing is recorded).
    pub(crate) fn is_layered(&self) -> bool {
        self.layered.load(Ordering::Relaxed)
    }

    pub(crate) fn register(&self, thread_id: &str, events: mpsc::UnboundedSender<ServerEvent>) {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner).insert(thread_id.to_owned(), events);
    }

    /// Forgets the thread's sender if it is still `events` (a thread evicted from the server;
    /// a newer registration of the same thread stays).
    pub(crate) fn unregister(&self, thread_id: &str, events: &mpsc::UnboundedSender<ServerEvent>) {
        let mut threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if threads.get(thread_id).is_some_and(|current| current.same_channel(events)) {
            threads.remove(thread_id);
        }
    }

    fn send(&self, thread_id: &str, event: Value) {
        let threads = self.threads.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(events) = threads.get(thread_id) {
            let _ = events.send(ServerEvent::Ordered(event, None));
        }
    }
}

/// The layer of a [`HookRuns`]; see there.
#[derive(Debug)]
pub struct HookRunLayer {
    runs: HookRuns,
}

/// What a span said about itself, kept in its extensions.
enum Noted {
    Run {
        thread: String,
    },
    Hook {
        fields: HookFields,
        started: Instant,
    },
    /// A `filter_messages` chain: the history's length before and after it.
    Filter {
        fields: HookFields,
    },
}

#[derive(Default)]
struct HookFields {
    id: String,
    kind: String,
    source: String,
    /// A governing hook's decision (`allow`, `deny`, `ask`, or what its failure decided).
    decision: Option<String>,
    thread: String,
    duration_us: Option<u64>,
    messages_before: Option<u64>,
    messages_after: Option<u64>,
}

impl Visit for HookFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "hook.id" | "hook_id" => self.id = value.to_owned(),
            "hook.kind" | "hook_kind" => self.kind = value.to_owned(),
            "hook.source" => self.source = value.to_owned(),
            "hook.decision" => self.decision = Some(value.to_owned()),
            "thread" => self.thread = value.to_owned(),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "duration_us" => self.duration_us = Some(value),
            "messages_before" => self.messages_before = Some(value),
            "messages_after" => self.messages_after = Some(value),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `%value` fields arrive here; only the thread id is recorded that way.
        if field.name() == "thread" {
            self.thread = format!("{value:?}");
        }
    }
}

impl<S> Layer<S> for HookRunLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_layer(&mut self, _subscriber: &mut S) {
        self.runs.layered.store(true, Ordering::Relaxed);
    }

    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let metadata = attrs.metadata();
        let noted = if metadata.target() == HOOK_TARGET && metadata.name() == "hook" {
            let mut fields = HookFields::default();
            attrs.record(&mut fields);
            Noted::Hook { fields, started: Instant::now() }
        } else if metadata.target() == HOOK_TARGET && metadata.name() == FILTER_SPAN {
            let mut fields = HookFields::default();
            attrs.record(&mut fields);
            Noted::Filter { fields }
        } else if metadata.target() == "hooks_server" && metadata.name() == RUN_SPAN {
            let mut fields = HookFields::default();
            attrs.record(&mut fields);
            Noted::Run { thread: fields.thread }
        } else {
            return;
        };
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(noted);
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(Noted::Hook { fields, .. } | Noted::Filter { fields }) =
                span.extensions_mut().get_mut::<Noted>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let event = match span.extensions().get::<Noted>() {
            Some(Noted::Hook { fields, started }) => {
                let mut run = json!({
                    "type": "hook_run",
                    "hookId": fields.id,
                    "kind": fields.kind,
                    "source": fields.source,
                    "durationUs": fields.duration_us.unwrap_or_else(|| started.elapsed().as_micros() as u64),
                });
                // G10: a governing hook's run says what it decided.
                if let Some(decision) = &fields.decision {
                    run["decision"] = json!(decision);
                }
                run
            }
            Some(Noted::Filter { fields }) => match (fields.messages_before, fields.messages_after) {
                (Some(before), Some(after)) => json!({ "type": "messages_filtered", "before": before, "after": after }),
                // The chain did not finish (its run was dropped): nothing to report.
                _ => return,
            },
            _ => return,
        };
        let thread = span.scope().skip(1).find_map(|ancestor| match ancestor.extensions().get::<Noted>() {
            Some(Noted::Run { thread }) => Some(thread.clone()),
            _ => None,
        });
        if let Some(thread) = thread {
            self.runs.send(&thread, event);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let metadata = event.metadata();
        if metadata.target() != HOOK_TARGET || *metadata.level() != tracing::Level::ERROR {
            return;
        }
        let mut fields = HookFields::default();
        event.record(&mut fields);
        if fields.id.is_empty() {
            return;
        }
        let Some(scope) = ctx.event_scope(event) else { return };
        let thread = scope.into_iter().find_map(|span| match span.extensions().get::<Noted>() {
            Some(Noted::Run { thread }) => Some(thread.clone()),
            _ => None,
        });
        // The log's text can carry a hook's error message; only the id and kind go out.
        if let Some(thread) = thread {
            self.runs.send(&thread, json!({ "type": "hook_failed", "hookId": fields.id, "kind": fields.kind }));
        }
    }
}
