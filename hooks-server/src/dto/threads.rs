//! Threads and messages: `POST /threads`, `GET /threads`, `GET /threads/{id}`,
//! `GET`/`POST /threads/{id}/messages`.

use hooks_runtime::store::ThreadRecord;
use hooks_runtime::types::HookMessage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::request_body::RequestBody;

/// `POST /threads`: `{"agent", "arguments"?}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewThread {
    pub(crate) agent: String,
    /// The values of the agent's prompt placeholders; absent or `null` is none.
    #[serde(default)]
    pub(crate) arguments: Option<Map<String, Value>>,
}

impl RequestBody for NewThread {
    const WHAT: &'static str = "a new thread";
}

/// `POST /threads/{id}/messages`: `{"content"}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewMessage {
    pub(crate) content: String,
}

impl RequestBody for NewMessage {
    const WHAT: &'static str = "a message";
}

/// The one shape of a thread in the API: its identity, the agent that has it now, the last
/// event id, and the fields of its status (`status`, and `reason` when it has one).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ThreadView<'a> {
    pub(crate) id: &'a str,
    pub(crate) agent: &'a str,
    pub(crate) user_id: Option<&'a str>,
    pub(crate) created_at: i64,
    pub(crate) arguments: &'a Map<String, Value>,
    pub(crate) last_event_id: String,
    /// A status object, as the runtime serializes its `ThreadStatus` (the store's copy of
    /// another process's is kept as it came, hence a `Value`).
    #[serde(flatten)]
    pub(crate) status: Option<Value>,
}

impl<'a> ThreadView<'a> {
    pub(crate) fn new(record: &'a ThreadRecord, agent: &'a str, last_event_id: u64, status: Option<Value>) -> Self {
        ThreadView {
            id: &record.id,
            agent,
            user_id: record.user_id.as_deref(),
            created_at: record.created_at,
            arguments: &record.arguments,
            last_event_id: last_event_id.to_string(),
            status: status.filter(Value::is_object),
        }
    }
}

/// `GET /threads`: a page of threads and the cursor of the next (`null` after the last).
#[derive(Debug, Serialize)]
pub(crate) struct ThreadPage<'a> {
    pub(crate) threads: Vec<ThreadView<'a>>,
    pub(crate) next: Option<String>,
}

/// `GET /threads/{id}/messages`.
#[derive(Debug, Serialize)]
pub(crate) struct MessageList {
    pub(crate) messages: Vec<HookMessage>,
}

/// `POST /threads/{id}/messages` 202: the id of the run that takes the message.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunAccepted {
    pub(crate) run_id: String,
}
