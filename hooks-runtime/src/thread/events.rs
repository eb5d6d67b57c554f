use serde::Serialize;

use crate::store::ThreadStatus;

/// An event broadcast to a thread's connected clients. Tool events carry ids, names and status,
/// never arguments or results.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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
    /// A tool call finished (T7), at the moment `tool_call_done` hooks run.
    ToolCallDone {
        /// The call id.
        id: String,
        /// The tool's name.
        name: String,
        /// `success` or `error`.
        status: String,
    },
    /// A message was stored.
    MessageCreated {
        /// Its id.
        id: String,
        /// Its role.
        role: String,
    },
    /// An event a hook or tool emitted with `state.emit`.
    Custom {
        /// The event's name.
        event: String,
        /// Its data.
        data: serde_json::Value,
    },
    /// The thread's status changed.
    Status {
        /// The new status.
        status: ThreadStatus,
    },
}
