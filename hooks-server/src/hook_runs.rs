//! Hook runs and a run's timeline on the thread event streams: a `tracing` layer that reads the
//! runtime's spans and its hook failure logs, and sends each to the event log of the thread
//! whose run they belong to:
//!
//! - `hook_run` (a hook span: id, kind, source, a governing hook's decision, and `within`, the
//!   model call `{"step"}` or tool call `{"toolCallId"}` that ran it), `model_call` (a `chat`
//!   span: model, step, finish reason, tokens) and `tool_run` (an `execute_tool` span: call id,
//!   tool, outcome), each with `runId`, `startedAtUs` (microseconds since the Unix epoch) and
//!   `durationUs`: what the inspector draws as the run's timeline (V4);
//! - `hook_failed` for a hook's failure log;
//! - `messages_filtered` (`{"before", "after"}`: the message counts around a `filter_messages`
//!   chain).
//!
//! The runtime's spans do not name their server run; the server runs each send inside a
//! `hooks_server_run` span that does (thread and run id), and a span's nearest such ancestor
//! is its run.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::mpsc;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

use crate::dto::events::{StreamEvent, Timing, Within};
use crate::event_log_writer::ServerEvent;

/// The runtime's target for hook spans and hook failure logs.
const HOOK_TARGET: &str = "hooks_runtime::hook";
/// The runtime's span around a `filter_messages` chain, with the message counts.
const FILTER_SPAN: &str = "filter_messages_chain";
/// The span the server runs each send in.
pub(crate) const RUN_SPAN: &str = "hooks_server_run";
/// The runtime's span of a model call, and its target.
const MODEL_SPAN: &str = "chat";
const MODEL_TARGET: &str = "hooks_runtime::model";
/// The runtime's span of a tool call, and its target.
const TOOL_SPAN: &str = "execute_tool";
const TOOL_TARGET: &str = "hooks_runtime::tool";

/// Where hook runs go: give [`HookRuns::layer`] to your `tracing` subscriber and the same
/// `HookRuns` to [`ServerConfig::hook_runs`](crate::ServerConfig::hook_runs).
///
/// The subscriber must enable INFO spans of the targets `hooks_runtime::hook`,
/// `hooks_runtime::model`, `hooks_runtime::tool` and `hooks_server` (the runtime builds none of
/// these spans otherwise, and costs nothing then).
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

    fn send(&self, thread_id: &str, event: StreamEvent) {
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
        run: String,
    },
    /// A hook's run, a model call or a tool call: a bar of the run's timeline.
    Timed {
        fields: SpanFields,
        started: Instant,
        started_at_us: u64,
    },
    /// A `filter_messages` chain: the history's length before and after it.
    Filter {
        fields: SpanFields,
    },
}

/// What the layer reads from the spans it notes.
#[derive(Default)]
struct SpanFields {
    id: String,
    kind: String,
    source: String,
    /// A governing hook's decision (`allow`, `deny`, `ask`, or what its failure decided).
    decision: Option<String>,
    thread: String,
    run: String,
    duration_us: Option<u64>,
    messages_before: Option<u64>,
    messages_after: Option<u64>,
    /// A model call's model and step, finish reason and tokens; a failure's `error.type`.
    model: String,
    step: Option<i64>,
    finish_reason: Option<String>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    error: Option<String>,
    /// A tool call's tool, call id and outcome.
    tool: String,
    call_id: String,
    outcome: Option<String>,
    /// What ran a hook: its model call (`{"step"}`) or tool call (`{"toolCallId"}`).
    within: Option<Within>,
}

impl Visit for SpanFields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "hook.id" | "hook_id" => self.id = value.to_owned(),
            "hook.kind" | "hook_kind" => self.kind = value.to_owned(),
            "hook.source" => self.source = value.to_owned(),
            "hook.decision" => self.decision = Some(value.to_owned()),
            "thread" => self.thread = value.to_owned(),
            "gen_ai.request.model" => self.model = value.to_owned(),
            "finish_reason" => self.finish_reason = Some(value.to_owned()),
            "error.type" => self.error = Some(value.to_owned()),
            "gen_ai.tool.name" => self.tool = value.to_owned(),
            "gen_ai.tool.call.id" => self.call_id = value.to_owned(),
            "hooks.tool.outcome" => self.outcome = Some(value.to_owned()),
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

    fn record_i64(&mut self, field: &Field, value: i64) {
        match field.name() {
            "duration_us" => self.duration_us = u64::try_from(value).ok(),
            "hooks.step" => self.step = Some(value),
            "messages_before" => self.messages_before = u64::try_from(value).ok(),
            "messages_after" => self.messages_after = u64::try_from(value).ok(),
            "gen_ai.usage.input_tokens" => self.input_tokens = Some(value),
            "gen_ai.usage.output_tokens" => self.output_tokens = Some(value),
            _ => {}
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `%value` fields arrive here; only the thread and run ids are recorded that way.
        match field.name() {
            "thread" => self.thread = format!("{value:?}"),
            "run" => self.run = format!("{value:?}"),
            _ => {}
        }
    }
}

impl SpanFields {
    /// The event a closed timed span of run `run_id` becomes: `hook_run`, `model_call` or
    /// `tool_run`, with its start (microseconds since the Unix epoch) and duration.
    fn timed_event(&self, name: &str, run_id: String, started_at_us: u64, duration_us: u64) -> StreamEvent {
        let timing = Timing { run_id, started_at_us, duration_us: self.duration_us.unwrap_or(duration_us) };
        match name {
            MODEL_SPAN => StreamEvent::ModelCall {
                model: self.model.clone(),
                step: self.step,
                finish_reason: self.finish_reason.clone(),
                input_tokens: self.input_tokens,
                output_tokens: self.output_tokens,
                error: self.error.clone(),
                timing,
            },
            TOOL_SPAN => StreamEvent::ToolRun {
                id: self.call_id.clone(),
                name: self.tool.clone(),
                outcome: self.outcome.clone(),
                timing,
            },
            _ => StreamEvent::HookRun {
                hook_id: self.id.clone(),
                kind: self.kind.clone(),
                source: self.source.clone(),
                // G10: a governing hook's run says what it decided.
                decision: self.decision.clone(),
                within: self.within.clone(),
                timing,
            },
        }
    }
}

/// Microseconds since the Unix epoch, now: the times of a run's timeline.
pub(crate) fn now_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_micros() as u64)
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
        let timed = matches!(
            (metadata.target(), metadata.name()),
            (HOOK_TARGET, "hook") | (MODEL_TARGET, MODEL_SPAN) | (TOOL_TARGET, TOOL_SPAN)
        );
        let Some(span) = ctx.span(id) else { return };
        let mut fields = SpanFields::default();
        let noted = if timed {
            attrs.record(&mut fields);
            if metadata.name() == "hook" {
                // What ran the hook: the nearest model call or tool call around it.
                fields.within = span.scope().skip(1).find_map(|ancestor| match ancestor.extensions().get::<Noted>() {
                    Some(Noted::Timed { fields, .. }) if ancestor.name() == MODEL_SPAN => {
                        Some(Within::ModelCall { step: fields.step })
                    }
                    Some(Noted::Timed { fields, .. }) if ancestor.name() == TOOL_SPAN => {
                        Some(Within::ToolCall { tool_call_id: fields.call_id.clone() })
                    }
                    _ => None,
                });
            }
            Noted::Timed { fields, started: Instant::now(), started_at_us: now_us() }
        } else if metadata.target() == HOOK_TARGET && metadata.name() == FILTER_SPAN {
            attrs.record(&mut fields);
            Noted::Filter { fields }
        } else if metadata.target() == "hooks_server" && metadata.name() == RUN_SPAN {
            attrs.record(&mut fields);
            Noted::Run { thread: fields.thread, run: fields.run }
        } else {
            return;
        };
        span.extensions_mut().insert(noted);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(Noted::Timed { fields, .. } | Noted::Filter { fields }) =
                span.extensions_mut().get_mut::<Noted>()
        {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        // Only a span inside a server run has a thread to go to.
        let Some((thread, run)) =
            span.scope().skip(1).find_map(|ancestor| match ancestor.extensions().get::<Noted>() {
                Some(Noted::Run { thread, run }) => Some((thread.clone(), run.clone())),
                _ => None,
            })
        else {
            return;
        };
        let event = match span.extensions().get::<Noted>() {
            Some(Noted::Timed { fields, started, started_at_us }) => {
                fields.timed_event(span.name(), run, *started_at_us, started.elapsed().as_micros() as u64)
            }
            Some(Noted::Filter { fields }) => match (fields.messages_before, fields.messages_after) {
                (Some(before), Some(after)) => StreamEvent::MessagesFiltered { before, after },
                // The chain did not finish (its run was dropped): nothing to report.
                _ => return,
            },
            _ => return,
        };
        self.runs.send(&thread, event);
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let metadata = event.metadata();
        if metadata.target() != HOOK_TARGET || *metadata.level() != tracing::Level::ERROR {
            return;
        }
        let mut fields = SpanFields::default();
        event.record(&mut fields);
        if fields.id.is_empty() {
            return;
        }
        let Some(scope) = ctx.event_scope(event) else { return };
        let thread = scope.into_iter().find_map(|span| match span.extensions().get::<Noted>() {
            Some(Noted::Run { thread, .. }) => Some(thread.clone()),
            _ => None,
        });
        // The log's text can carry a hook's error message; only the id and kind go out.
        if let Some(thread) = thread {
            self.runs.send(&thread, StreamEvent::HookFailed { hook_id: fields.id, kind: fields.kind });
        }
    }
}
