//! What a thread reports: its status and the events broadcast to its clients. Both the thread
//! pipelines and the store (which carries events to other processes) use them, so they live
//! below both.

use std::sync::Arc;

use hooks_core::{HookMessage, Role, ToolStatus};
use serde::{Deserialize, Serialize, Serializer};

use crate::reasons::{FailReason, StopReason};

/// Where a thread stands. On the wire and in the stores: `{"status":"failed","reason":"model_error"}`,
/// the reason only for `stopped` and `failed`.
///
/// ```
/// use hooks_runtime::store::{FailReason, ThreadStatus};
///
/// let status = ThreadStatus::Failed(FailReason::MessageHookError);
/// assert_eq!(status.as_str(), "failed");
/// assert_eq!(status.reason(), Some("message_hook_error"));
/// assert_eq!(
///     serde_json::to_value(&ThreadStatus::AwaitingApproval).unwrap(),
///     serde_json::json!({"status": "awaiting_approval"})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThreadStatus {
    /// Created, or its last run ended normally.
    Idle,
    /// A run is in progress.
    Running,
    /// The last run stopped early, on purpose or at a limit ([`StopReason`]).
    Stopped(StopReason),
    /// The last run failed ([`FailReason`]).
    Failed(FailReason),
    /// The tool calls of the last step wait for a person's decision; see `Thread::pending_approvals`.
    AwaitingApproval,
}

impl ThreadStatus {
    /// The status's wire name (`idle`, `running`, `stopped`, `failed`, `awaiting_approval`), as
    /// the `status` member and a store's status column hold it.
    pub fn as_str(&self) -> &'static str {
        match self {
            ThreadStatus::Idle => "idle",
            ThreadStatus::Running => "running",
            ThreadStatus::Stopped(_) => "stopped",
            ThreadStatus::Failed(_) => "failed",
            ThreadStatus::AwaitingApproval => "awaiting_approval",
        }
    }

    /// The reason of a `stopped` or `failed` status, as its wire name.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ThreadStatus::Stopped(reason) => Some(reason.as_str()),
            ThreadStatus::Failed(reason) => Some(reason.as_str()),
            _ => None,
        }
    }
}

impl std::fmt::Display for ThreadStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason() {
            Some(reason) => write!(f, "{} ({reason})", self.as_str()),
            None => f.write_str(self.as_str()),
        }
    }
}

/// An event broadcast to a thread's connected clients. Tool events carry ids, names and status,
/// never arguments or results. Messages arrive whole, in `message_created`; the text of a reply
/// as it streams comes only to those who subscribe to it
/// ([`Thread::subscribe_text_deltas`](crate::Thread::subscribe_text_deltas)), as
/// `message_delta`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThreadEvent {
    /// A tool call started (T7), at the moment `tool_call_started` hooks run.
    ToolCallStarted {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The progress argument's value, when the tool declares one and it streamed.
        progress: Option<String>,
    },
    /// A running tool call reported progress (a tool from an MCP server forwards its server's
    /// progress notifications): `{"type":"tool_call_progress","id","name","progress","total","message"}`.
    ToolCallProgress {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// The progress so far.
        progress: f64,
        /// The total, when known.
        total: Option<f64>,
        /// What is happening, when the tool says.
        message: Option<String>,
    },
    /// A tool call finished (T7), at the moment `tool_call_done` hooks run.
    ToolCallDone {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// Whether the call succeeded; `"success"` or `"error"` on the wire.
        status: ToolStatus,
        /// Whether the call was denied by a `before_tool_call` hook, a guard or a person (G3);
        /// present in the JSON only when it was.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        denied: bool,
        /// Whether the call was interrupted by its process's death (G12): it may or may not
        /// have run, and nothing runs it again; present in the JSON only when it was.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        interrupted: bool,
    },
    /// A tool call waits for a person's approval (A1):
    /// `{"type":"approval_requested","id","name","reasons":[{"hook","reason"}]}`.
    ApprovalRequested {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// Who asked and why.
        reasons: Vec<crate::approval_records::ApprovalReason>,
    },
    /// A waiting tool call was decided: `{"type":"approval_resolved","id","decision"}`.
    ApprovalResolved {
        /// The call id.
        id: String,
        /// `approved` or `denied`.
        decision: crate::approval_records::ApprovalDecision,
    },
    /// A message was stored: `{"type":"message_created","id","role","message":{...}}`, the
    /// message as stored, so that a client shows it without reading the thread back.
    MessageCreated {
        /// Its id.
        id: String,
        /// Its role; `"user"`, `"assistant"` and so on on the wire.
        role: Role,
        /// The message as stored; shared, so that each subscriber's copy of the event is cheap.
        #[serde(serialize_with = "shared_message")]
        message: Arc<HookMessage>,
    },
    /// A piece of a reply's text as the model streams it:
    /// `{"type":"message_delta","step":1,"delta":"Hel"}`. Sent only to
    /// [`Thread::subscribe_text_deltas`](crate::Thread::subscribe_text_deltas) subscribers; the
    /// step's `message_created` carries the whole message afterwards.
    MessageDelta {
        /// The model step (`state.execution.stepCount`) the text belongs to.
        step: u32,
        /// The text, as the model streamed it (before any hook).
        delta: String,
    },
    /// An event a hook or tool emitted with `state.emit`.
    Custom {
        /// The event's name.
        event: String,
        /// Its data.
        data: serde_json::Value,
    },
    /// The thread's status changed: `{"type":"status","status":"failed","reason":"..."}`.
    Status {
        /// The new status.
        #[serde(flatten)]
        status: ThreadStatus,
    },
}

/// Serializes the message itself (serde serializes an `Arc` only with its `rc` feature).
fn shared_message<S: Serializer>(message: &Arc<HookMessage>, serializer: S) -> Result<S::Ok, S::Error> {
    message.as_ref().serialize(serializer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t7_event_json_shapes() {
        let started = ThreadEvent::ToolCallStarted { id: "call_1".into(), name: "write_file".into(), progress: None };
        assert_eq!(
            serde_json::to_value(&started).unwrap(),
            serde_json::json!({"type": "tool_call_started", "id": "call_1", "name": "write_file", "progress": null})
        );
        let done = ThreadEvent::ToolCallDone {
            id: "call_1".into(),
            name: "write_file".into(),
            status: ToolStatus::Error,
            denied: false,
            interrupted: false,
        };
        assert_eq!(
            serde_json::to_value(&done).unwrap(),
            serde_json::json!({"type": "tool_call_done", "id": "call_1", "name": "write_file", "status": "error"})
        );
        let failed = ThreadEvent::Status { status: ThreadStatus::Failed(FailReason::MessageHookError) };
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            serde_json::json!({"type": "status", "status": "failed", "reason": "message_hook_error"})
        );
        let message: HookMessage =
            serde_json::from_value(serde_json::json!({"id": "m1", "role": "user", "content": "hi", "created_at": 5}))
                .unwrap();
        let created = ThreadEvent::MessageCreated { id: "m1".into(), role: Role::User, message: Arc::new(message) };
        assert_eq!(
            serde_json::to_value(&created).unwrap(),
            serde_json::json!({"type": "message_created", "id": "m1", "role": "user",
                               "message": {"id": "m1", "role": "user", "content": "hi", "created_at": 5}})
        );
        let delta = ThreadEvent::MessageDelta { step: 2, delta: "Hel".into() };
        assert_eq!(
            serde_json::to_value(&delta).unwrap(),
            serde_json::json!({"type": "message_delta", "step": 2, "delta": "Hel"})
        );
        let idle = ThreadEvent::Status { status: ThreadStatus::Idle };
        assert_eq!(serde_json::to_value(&idle).unwrap(), serde_json::json!({"type": "status", "status": "idle"}));
    }
}
