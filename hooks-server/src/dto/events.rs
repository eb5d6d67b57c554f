//! What the server itself writes on the event streams (the runtime's own events it passes on as
//! the runtime serializes them). Every payload has a `type`; the other names are camelCase.

use hooks_runtime::store::ThreadStatus;
use serde::Serialize;
use serde_json::Value;

/// An event the server writes on a thread's or a user's stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub(crate) enum StreamEvent {
    /// A run took its turn: `runId`, `atUs` (microseconds since the Unix epoch).
    RunStarted { run_id: String, at_us: u64 },
    /// A run ended: `runId`, how (see [`RunEnd`]), `atUs`.
    RunFinished {
        run_id: String,
        #[serde(flatten)]
        end: RunEnd,
        at_us: u64,
    },
    /// A hook ran: id, kind, source, a governing hook's decision, what ran it.
    HookRun {
        hook_id: String,
        kind: String,
        source: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        decision: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        within: Option<Within>,
        #[serde(flatten)]
        timing: Timing,
    },
    /// A model call of a run: model, step, and what the call reported.
    ModelCall {
        model: String,
        step: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        input_tokens: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        output_tokens: Option<i64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(flatten)]
        timing: Timing,
    },
    /// A tool call of a run: its call id, tool and outcome.
    ToolRun {
        id: String,
        name: String,
        outcome: Option<String>,
        #[serde(flatten)]
        timing: Timing,
    },
    /// A hook failed (its log's text stays in the log: it may carry contents).
    HookFailed { hook_id: String, kind: String },
    /// The message counts around a `filter_messages` chain.
    MessagesFiltered { before: u64, after: u64 },
    /// A thread was created for the user (here or by another process).
    ThreadCreated { thread_id: String, agent: String },
    /// A user value was set (`value` is the user's JSON) or removed (`null`).
    ValueChanged { key: String, value: Option<Value> },
    /// A connection became a client of the user.
    ClientAttached { client_id: String },
    /// A client of the user went away.
    ClientDetached { client_id: String },
    /// Events the client will never get (no id of its own).
    EventsLost { count: u64 },
    /// The client's last event id is past this stream's end: the stream starts again.
    StreamReset { reason: &'static str, latest: String },
}

/// How a run ended, flattened into `run_finished`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum RunEnd {
    /// The run ran: its steps, the thread's status after it, and a blocking hook's reason.
    Ran {
        steps: u32,
        #[serde(flatten)]
        status: ThreadStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        blocked: Option<String>,
    },
    /// The message did not run: tool calls wait for approval (`pending`).
    AwaitingApproval { steps: u32, status: AwaitingApproval, pending: Vec<String> },
    /// The run could not start, or panicked: `status` `failed`, `reason` `runtime_error`.
    Failed { status: Failed, reason: RuntimeErrorReason },
}

/// `"awaiting_approval"` (a one-word enum: a unit struct would serialize as `null`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AwaitingApproval {
    AwaitingApproval,
}

/// `"failed"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Failed {
    Failed,
}

/// `"runtime_error"`: the client learns only the kind; the log has the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RuntimeErrorReason {
    RuntimeError,
}

/// What ran a hook: a model call (its step) or a tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged, rename_all_fields = "camelCase")]
pub(crate) enum Within {
    ModelCall { step: Option<i64> },
    ToolCall { tool_call_id: String },
}

/// A bar of a run's timeline: the run, its start and its duration.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Timing {
    pub(crate) run_id: String,
    pub(crate) started_at_us: u64,
    pub(crate) duration_us: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value(event: &StreamEvent) -> Value {
        serde_json::to_value(event).unwrap()
    }

    #[test]
    fn run_events_keep_their_wire_shape() {
        let finished = |end| StreamEvent::RunFinished { run_id: "r".into(), end, at_us: 7 };
        assert_eq!(
            value(&StreamEvent::RunStarted { run_id: "r".into(), at_us: 1 }),
            json!({ "type": "run_started", "runId": "r", "atUs": 1 })
        );
        assert_eq!(
            value(&finished(RunEnd::Ran { steps: 2, status: ThreadStatus::Idle, blocked: Some("no".into()) })),
            json!({ "type": "run_finished", "runId": "r", "steps": 2, "status": "idle", "blocked": "no", "atUs": 7 })
        );
        assert_eq!(
            value(&finished(RunEnd::AwaitingApproval {
                steps: 0,
                status: AwaitingApproval::AwaitingApproval,
                pending: vec!["c1".into()]
            })),
            json!({ "type": "run_finished", "runId": "r", "steps": 0, "status": "awaiting_approval", "pending": ["c1"], "atUs": 7 })
        );
        assert_eq!(
            value(&finished(RunEnd::Failed { status: Failed::Failed, reason: RuntimeErrorReason::RuntimeError })),
            json!({ "type": "run_finished", "runId": "r", "status": "failed", "reason": "runtime_error", "atUs": 7 })
        );
    }

    #[test]
    fn timeline_events_keep_their_wire_shape() {
        let timing = Timing { run_id: "r".into(), started_at_us: 5, duration_us: 3 };
        let hook = StreamEvent::HookRun {
            hook_id: "h".into(),
            kind: "before_tool_call".into(),
            source: "code".into(),
            decision: Some("deny".into()),
            within: Some(Within::ToolCall { tool_call_id: "c".into() }),
            timing: timing.clone(),
        };
        assert_eq!(
            value(&hook),
            json!({ "type": "hook_run", "hookId": "h", "kind": "before_tool_call", "source": "code", "decision": "deny",
                    "within": { "toolCallId": "c" }, "runId": "r", "startedAtUs": 5, "durationUs": 3 })
        );
        let model = StreamEvent::ModelCall {
            model: "m".into(),
            step: None,
            finish_reason: Some("stop".into()),
            input_tokens: None,
            output_tokens: Some(4),
            error: None,
            timing: timing.clone(),
        };
        assert_eq!(
            value(&model),
            json!({ "type": "model_call", "model": "m", "step": null, "finishReason": "stop", "outputTokens": 4,
                    "runId": "r", "startedAtUs": 5, "durationUs": 3 })
        );
        let within = Within::ModelCall { step: Some(1) };
        assert_eq!(serde_json::to_value(within).unwrap(), json!({ "step": 1 }));
        assert_eq!(
            value(&StreamEvent::ValueChanged { key: "k".into(), value: None }),
            json!({ "type": "value_changed", "key": "k", "value": null })
        );
        assert_eq!(value(&StreamEvent::EventsLost { count: 3 }), json!({ "type": "events_lost", "count": 3 }));
    }
}
