//! What the SQL stores share about their rows: how an error names what it is about, how JSON
//! columns are written and read back, and how the columns of a thread, a message and a parked
//! tool call become the runtime's values. Each store reads a column through its own driver
//! ([`Columns`], one small impl per driver) and the rest is here, so the rules (what counts as
//! corrupt, what an error says, that it never quotes a stored value) are one set for both.

use std::fmt;

use hooks_core::{HookMessage, Role};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{StoreError, StoreErrorKind, ThreadRecord, ThreadStatus};
use crate::admission_record::{ApprovalMatcher, RememberScope};
use crate::approval_records::{ApprovalState, ParkedToolCall};
use crate::reasons::{FailReason, StopReason};
use crate::remembered_approvals::RememberedApproval;

/// What an operation works on, so that every error names the operation and its ids.
pub(super) struct Op<'a> {
    pub(super) name: &'static str,
    pub(super) thread_id: &'a str,
    pub(super) message_id: Option<&'a str>,
    /// The message's row (`seq`, its place in the thread), when it was read from one.
    pub(super) row: Option<i64>,
}

impl<'a> Op<'a> {
    pub(super) fn thread(name: &'static str, thread_id: &'a str) -> Self {
        Op { name, thread_id, message_id: None, row: None }
    }

    pub(super) fn message(name: &'static str, thread_id: &'a str, message_id: &'a str) -> Self {
        Op { name, thread_id, message_id: Some(message_id), row: None }
    }

    pub(super) fn row(name: &'static str, thread_id: &'a str, row: i64, message_id: Option<&'a str>) -> Self {
        Op { name, thread_id, message_id, row: Some(row) }
    }

    /// The one place a store error is worded.
    pub(super) fn error(&self, kind: StoreErrorKind, detail: impl fmt::Display) -> StoreError {
        let (name, thread_id) = (self.name, self.thread_id);
        let text = match (self.message_id, self.row) {
            (Some(message_id), Some(row)) => {
                format!("{name}: message `{message_id}` (row {row}) in thread `{thread_id}`: {detail}")
            }
            (None, Some(row)) => format!("{name}: row {row} in thread `{thread_id}`: {detail}"),
            (Some(message_id), None) => format!("{name}: message `{message_id}` in thread `{thread_id}`: {detail}"),
            (None, None) => format!("{name}: thread `{thread_id}`: {detail}"),
        };
        StoreError::new(kind, text)
    }
}

/// One result row, read column by column through the store's driver. A driver error is worded
/// by `op`, which names what the row belongs to.
pub(super) trait Columns {
    fn text(&self, op: &Op<'_>, column: usize) -> Result<String, StoreError>;
    fn opt_text(&self, op: &Op<'_>, column: usize) -> Result<Option<String>, StoreError>;
    /// A 64-bit integer column (`INTEGER` in SQLite, `BIGINT` in PostgreSQL).
    fn int(&self, op: &Op<'_>, column: usize) -> Result<i64, StoreError>;
    fn opt_int(&self, op: &Op<'_>, column: usize) -> Result<Option<i64>, StoreError>;
    fn opt_bool(&self, op: &Op<'_>, column: usize) -> Result<Option<bool>, StoreError>;
}

/// A JSON error by kind and position, without the text it was reading.
pub(super) fn describe_json_error(e: &serde_json::Error) -> String {
    let kind = match e.classify() {
        serde_json::error::Category::Io => "an I/O error",
        serde_json::error::Category::Syntax => "invalid JSON",
        serde_json::error::Category::Data => "JSON of the wrong shape",
        serde_json::error::Category::Eof => "truncated JSON",
    };
    format!("{kind} at line {}, column {}", e.line(), e.column())
}

/// `value` as JSON text for a column; `what` names it in the error.
pub(super) fn encode(op: &Op<'_>, what: impl fmt::Display, value: &impl Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value)
        .map_err(|e| op.error(StoreErrorKind::Other, format_args!("encode {what}: {}", describe_json_error(&e))))
}

/// A JSON column read back; one that does not parse as a `T` is corrupt, named by `what`.
pub(super) fn decode<T: DeserializeOwned>(op: &Op<'_>, what: impl fmt::Display, text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| {
        op.error(StoreErrorKind::Corrupt, format_args!("the stored {what} holds {}", describe_json_error(&e)))
    })
}

/// A thread's status as its two columns hold it: the wire name and, for `stopped` and `failed`,
/// the reason.
pub(super) fn status_columns(status: &ThreadStatus) -> (&'static str, Option<&str>) {
    (status.as_str(), status.reason())
}

/// The status [`status_columns`] wrote. An unknown reason is kept as `Other`; an unknown status,
/// or `stopped`/`failed` without a reason, is corrupt.
pub(super) fn status(op: &Op<'_>, status: &str, reason: Option<&str>) -> Result<ThreadStatus, StoreError> {
    match (status, reason) {
        ("idle", _) => Ok(ThreadStatus::Idle),
        ("running", _) => Ok(ThreadStatus::Running),
        ("awaiting_approval", _) => Ok(ThreadStatus::AwaitingApproval),
        ("stopped", Some(reason)) => Ok(ThreadStatus::Stopped(StopReason::parse(reason))),
        ("failed", Some(reason)) => Ok(ThreadStatus::Failed(FailReason::parse(reason))),
        ("stopped" | "failed", None) => {
            Err(op.error(StoreErrorKind::Corrupt, format_args!("status `{status}` has no reason")))
        }
        _ => Err(op.error(StoreErrorKind::Corrupt, format_args!("unknown status `{status}`"))),
    }
}

/// The columns of a `threads` row.
pub(super) struct ThreadColumns {
    agent: String,
    user_id: Option<String>,
    created_at: i64,
    arguments: String,
    status: String,
    status_reason: Option<String>,
}

impl ThreadColumns {
    /// Reads `agent, user_id, created_at, arguments, status, status_reason`, in that order.
    pub(super) fn read(op: &Op<'_>, row: &impl Columns) -> Result<Self, StoreError> {
        Ok(ThreadColumns {
            agent: row.text(op, 0)?,
            user_id: row.opt_text(op, 1)?,
            created_at: row.int(op, 2)?,
            arguments: row.text(op, 3)?,
            status: row.text(op, 4)?,
            status_reason: row.opt_text(op, 5)?,
        })
    }

    /// The thread `op` names, with `values` (key and JSON text, in key order).
    pub(super) fn into_record(
        self,
        op: &Op<'_>,
        values: impl IntoIterator<Item = (String, String)>,
    ) -> Result<ThreadRecord, StoreError> {
        let arguments: Map<String, Value> = decode(op, "`arguments` column", &self.arguments)?;
        let status = status(op, &self.status, self.status_reason.as_deref())?;
        let values = values
            .into_iter()
            .map(|(key, json)| {
                let value = decode(op, format_args!("thread value `{key}`"), &json)?;
                Ok((key, value))
            })
            .collect::<Result<_, StoreError>>()?;
        let mut record = ThreadRecord::new(op.thread_id, self.agent, self.created_at);
        record.user_id = self.user_id;
        record.arguments = arguments;
        record.status = status;
        record.values = values;
        Ok(record)
    }
}

/// The role a message row names.
fn role(op: &Op<'_>, role: &str) -> Result<Role, StoreError> {
    [Role::System, Role::User, Role::Assistant, Role::Tool]
        .into_iter()
        .find(|known| known.as_str() == role)
        .ok_or_else(|| op.error(StoreErrorKind::Corrupt, format_args!("unknown role `{role}`")))
}

/// Reads one message row of `id, role, content, name, tool_calls, tool_call_id, created_at,
/// parent_id, depth, silent, extra, seq` (a store's select names them so); every bad value is
/// corrupt, named by the operation, the thread, the row (`seq`) and the message id.
pub(super) fn read_message(
    operation: &'static str,
    thread_id: &str,
    row: &impl Columns,
) -> Result<HookMessage, StoreError> {
    let seq = row.int(&Op::thread(operation, thread_id), 11)?;
    let id = row.text(&Op::row(operation, thread_id, seq, None), 0)?;
    // The message holds the id from here on, so that every error below names it; each column
    // then sets its field.
    let mut message = HookMessage::new(id, Role::User, String::new(), 0);
    let op = Op::row(operation, thread_id, seq, Some(&message.id));
    message.role = role(&op, &row.text(&op, 1)?)?;
    message.content = row.opt_text(&op, 2)?;
    message.name = row.opt_text(&op, 3)?;
    message.tool_calls = row.opt_text(&op, 4)?;
    message.tool_call_id = row.opt_text(&op, 5)?;
    message.created_at = row.int(&op, 6)?;
    message.parent_id = row.opt_text(&op, 7)?;
    message.depth = row
        .opt_int(&op, 8)?
        .map(u32::try_from)
        .transpose()
        .map_err(|_| op.error(StoreErrorKind::Corrupt, "the stored depth is not a non-negative 32-bit integer"))?;
    message.silent = row.opt_bool(&op, 9)?;
    message.extra = decode(&op, "`extra` column", &row.text(&op, 10)?)?;
    Ok(message)
}

/// A message's `extra` fields as the JSON text of its column.
pub(super) fn extra_json(op: &Op<'_>, message: &HookMessage) -> Result<String, StoreError> {
    encode(op, "the extra fields", &message.extra)
}

/// The JSON columns of a parked tool call's row, encoded.
pub(super) struct ParkedJson {
    pub(super) arguments: String,
    pub(super) reasons: String,
    pub(super) result: Option<String>,
    pub(super) admission: Option<String>,
}

impl ParkedJson {
    pub(super) fn of(op: &Op<'_>, call: &ParkedToolCall) -> Result<Self, StoreError> {
        Ok(ParkedJson {
            arguments: call.arguments.to_string(),
            reasons: encode(op, "the approval reasons", &call.reasons)?,
            result: call.result.as_ref().map(Value::to_string),
            admission: call.admission.as_ref().map(|record| encode(op, "the decision record", record)).transpose()?,
        })
    }
}

/// The columns of a `parked_tool_calls` row.
pub(super) struct ParkedColumns {
    id: String,
    position: i64,
    tool: String,
    arguments: String,
    reasons: String,
    requested_at: i64,
    state: String,
    decision_reason: Option<String>,
    result: Option<String>,
    decided_by: Option<String>,
    decided_at: Option<i64>,
    settled: bool,
    admission: Option<String>,
}

/// The columns [`ParkedColumns::read`] reads, in its order.
pub(super) const PARKED_COLUMN_LIST: &str = "id, position, tool, arguments, reasons, requested_at, state, decision_reason, result, decided_by, decided_at, settled, admission";

impl ParkedColumns {
    /// Reads [`PARKED_COLUMN_LIST`], in that order.
    pub(super) fn read(op: &Op<'_>, row: &impl Columns) -> Result<Self, StoreError> {
        Ok(ParkedColumns {
            id: row.text(op, 0)?,
            position: row.int(op, 1)?,
            tool: row.text(op, 2)?,
            arguments: row.text(op, 3)?,
            reasons: row.text(op, 4)?,
            requested_at: row.int(op, 5)?,
            state: row.text(op, 6)?,
            decision_reason: row.opt_text(op, 7)?,
            result: row.opt_text(op, 8)?,
            decided_by: row.opt_text(op, 9)?,
            decided_at: row.opt_int(op, 10)?,
            settled: row.opt_bool(op, 11)?.unwrap_or(false),
            admission: row.opt_text(op, 12)?,
        })
    }

    /// The parked call; a bad state, position or JSON column is corrupt.
    pub(super) fn into_call(self, op: &Op<'_>) -> Result<ParkedToolCall, StoreError> {
        let state = ApprovalState::from_name(&self.state).ok_or_else(|| {
            op.error(StoreErrorKind::Corrupt, format_args!("unknown parked call state `{}`", self.state))
        })?;
        let position = u32::try_from(self.position).map_err(|_| {
            op.error(StoreErrorKind::Corrupt, "the stored position of a parked call is not a 32-bit position")
        })?;
        let arguments = decode(op, format_args!("arguments of parked call `{}`", self.id), &self.arguments)?;
        let mut call = ParkedToolCall::new(self.id, self.tool, arguments, position, state);
        call.reasons = decode(op, format_args!("reasons of parked call `{}`", call.id), &self.reasons)?;
        call.requested_at = self.requested_at;
        call.decision_reason = self.decision_reason;
        call.decided_by = self.decided_by;
        call.decided_at = self.decided_at;
        call.settled = self.settled;
        call.admission = self
            .admission
            .as_deref()
            .map(|record| decode(op, format_args!("decision record of parked call `{}`", call.id), record))
            .transpose()?;
        call.result = self
            .result
            .as_deref()
            .map(|result| decode(op, format_args!("result of parked call `{}`", call.id), result))
            .transpose()?;
        Ok(call)
    }
}

/// The error of a user value operation: names the operation and the user, never a value.
pub(super) fn user_error<'a>(operation: &'static str, user_id: &'a str) -> impl Fn(String) -> StoreError + 'a {
    move |detail| StoreError::other(format!("{operation}: user `{user_id}`: {detail}"))
}

/// A user value as the JSON text of its column.
pub(super) fn encode_user_value(
    fail: &impl Fn(String) -> StoreError,
    key: &str,
    value: &Value,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| fail(format!("encode `{key}`: {}", describe_json_error(&e))))
}

/// A stored user value; one that is not JSON is corrupt, named by its key.
pub(super) fn user_value(fail: &impl Fn(String) -> StoreError, key: &str, json: &str) -> Result<Value, StoreError> {
    serde_json::from_str(json).map_err(|e| {
        fail(format!("the stored user value `{key}` holds {}", describe_json_error(&e)))
            .of_kind(StoreErrorKind::Corrupt)
    })
}

/// The columns of a remembered approval (A9), in [`REMEMBERED_COLUMN_LIST`]'s order: the
/// matcher as its kind (`arguments` or `pattern`) and its text (the hash or the rule).
pub(super) struct RememberedColumns {
    pub(super) id: String,
    pub(super) scope: String,
    pub(super) tool: String,
    pub(super) matcher_kind: String,
    pub(super) matcher: String,
    pub(super) user_id: Option<String>,
    pub(super) thread_id: Option<String>,
    pub(super) created_at: i64,
    pub(super) created_by: String,
}

/// The columns a remembered approval is read from, in [`RememberedColumns`]'s order.
pub(super) const REMEMBERED_COLUMN_LIST: &str =
    "id, scope, tool, matcher_kind, matcher, user_id, thread_id, created_at, created_by";

impl RememberedColumns {
    /// The columns of `approval`.
    pub(super) fn of(approval: &RememberedApproval) -> Self {
        let (matcher_kind, matcher) = match &approval.matcher {
            ApprovalMatcher::Arguments { sha256 } => ("arguments", sha256.clone()),
            ApprovalMatcher::Pattern { rule } => ("pattern", rule.clone()),
        };
        RememberedColumns {
            id: approval.id.clone(),
            scope: approval.scope.as_str().to_owned(),
            tool: approval.tool.clone(),
            matcher_kind: matcher_kind.to_owned(),
            matcher,
            user_id: approval.user_id.clone(),
            thread_id: approval.thread_id.clone(),
            created_at: approval.created_at,
            created_by: approval.created_by.clone(),
        }
    }

    /// The approval; a scope or matcher kind this build does not know is corrupt, named by the
    /// approval's id.
    pub(super) fn into_approval(self, operation: &'static str) -> Result<RememberedApproval, StoreError> {
        let corrupt = |what: &str| {
            StoreError::corrupt(format!("{operation}: remembered approval `{}` has an unknown {what}", self.id))
        };
        let scope = RememberScope::from_name(&self.scope)
            .filter(|scope| *scope != RememberScope::Once)
            .ok_or_else(|| corrupt("scope"))?;
        let matcher = match self.matcher_kind.as_str() {
            "arguments" => ApprovalMatcher::Arguments { sha256: self.matcher },
            "pattern" => ApprovalMatcher::Pattern { rule: self.matcher },
            _ => return Err(corrupt("matcher kind")),
        };
        let mut approval = RememberedApproval::new(self.id, scope, self.tool, matcher).by(self.created_by);
        approval.user_id = self.user_id;
        approval.thread_id = self.thread_id;
        approval.created_at = self.created_at;
        Ok(approval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval_records::ApprovalReason;

    const SECRET: &str = "s3cret-contents";

    fn thread_columns() -> ThreadColumns {
        ThreadColumns {
            agent: "support".to_owned(),
            user_id: Some("alice".to_owned()),
            created_at: 5,
            arguments: r#"{"city":"Lisbon"}"#.to_owned(),
            status: "failed".to_owned(),
            status_reason: Some("model_error".to_owned()),
        }
    }

    fn parked_columns() -> ParkedColumns {
        ParkedColumns {
            id: "c1".to_owned(),
            position: 1,
            tool: "rm".to_owned(),
            arguments: r#"{"path":"/"}"#.to_owned(),
            reasons: "[]".to_owned(),
            requested_at: 9,
            state: "approved".to_owned(),
            decision_reason: Some("fine".to_owned()),
            result: Some(r#""done""#.to_owned()),
            decided_by: Some("person".to_owned()),
            decided_at: Some(10),
            settled: true,
            admission: None,
        }
    }

    /// A row of JSON values, as a driver would hand them out; a column of the wrong type is a
    /// driver error.
    struct Fake(Vec<Value>);

    impl Fake {
        fn at<T: DeserializeOwned>(&self, op: &Op<'_>, column: usize) -> Result<T, StoreError> {
            serde_json::from_value(self.0[column].clone())
                .map_err(|_| op.error(StoreErrorKind::Other, format_args!("column {column} has another type")))
        }
    }

    impl Columns for Fake {
        fn text(&self, op: &Op<'_>, column: usize) -> Result<String, StoreError> {
            self.at(op, column)
        }
        fn opt_text(&self, op: &Op<'_>, column: usize) -> Result<Option<String>, StoreError> {
            self.at(op, column)
        }
        fn int(&self, op: &Op<'_>, column: usize) -> Result<i64, StoreError> {
            self.at(op, column)
        }
        fn opt_int(&self, op: &Op<'_>, column: usize) -> Result<Option<i64>, StoreError> {
            self.at(op, column)
        }
        fn opt_bool(&self, op: &Op<'_>, column: usize) -> Result<Option<bool>, StoreError> {
            self.at(op, column)
        }
    }

    fn message_row() -> Vec<Value> {
        serde_json::from_str(r#"["m1", "assistant", "hello", null, null, null, 7, "m0", 2, true, "{\"k\":1}", 3]"#)
            .unwrap()
    }

    #[test]
    fn a_message_is_read_column_by_column_in_the_select_order() {
        let message = read_message("messages", "t1", &Fake(message_row())).unwrap();
        assert_eq!((message.id.as_str(), message.role), ("m1", Role::Assistant));
        assert_eq!((message.content.as_deref(), message.created_at), (Some("hello"), 7));
        assert_eq!((message.parent_id.as_deref(), message.depth, message.silent), (Some("m0"), Some(2), Some(true)));
        assert_eq!(message.extra.get("k"), Some(&Value::from(1)));
        let op = Op::thread("messages", "t1");
        assert_eq!(extra_json(&op, &message).unwrap(), r#"{"k":1}"#);
    }

    #[test]
    fn a_driver_error_names_as_much_of_the_row_as_was_read() {
        let mut no_seq = message_row();
        no_seq[11] = Value::from("three");
        let error = read_message("messages", "t1", &Fake(no_seq)).unwrap_err();
        assert_eq!(error.message(), "messages: thread `t1`: column 11 has another type");
        let mut no_id = message_row();
        no_id[0] = Value::from(1);
        let error = read_message("messages", "t1", &Fake(no_id)).unwrap_err();
        assert_eq!(error.message(), "messages: row 3 in thread `t1`: column 0 has another type");
        let mut bad_depth = message_row();
        bad_depth[8] = Value::from("deep");
        let error = read_message("messages", "t1", &Fake(bad_depth)).unwrap_err();
        assert_eq!(error.message(), "messages: message `m1` (row 3) in thread `t1`: column 8 has another type");
    }

    #[test]
    fn thread_and_parked_call_rows_are_read_in_their_select_order() {
        let op = Op::thread("load_thread", "t1");
        let thread: Vec<Value> =
            serde_json::from_str(r#"["support", "alice", 5, "{\"city\":\"Lisbon\"}", "failed", "model_error"]"#)
                .unwrap();
        let record = ThreadColumns::read(&op, &Fake(thread)).unwrap().into_record(&op, []).unwrap();
        assert_eq!(
            (record.agent.as_str(), record.user_id.as_deref(), record.created_at),
            ("support", Some("alice"), 5)
        );
        assert_eq!(record.status, ThreadStatus::Failed(FailReason::parse("model_error")));
        let call: Vec<Value> = serde_json::from_str(
            r#"["c1", 1, "rm", "{}", "[]", 9, "denied", null, null, "person", 10, true, "{\"entries\":[]}"]"#,
        )
        .unwrap();
        let call = ParkedColumns::read(&op, &Fake(call)).unwrap().into_call(&op).unwrap();
        assert_eq!((call.id.as_str(), call.position, call.tool.as_str()), ("c1", 1, "rm"));
        assert_eq!((call.requested_at, call.state), (9, ApprovalState::Denied));
        assert_eq!((call.decided_by.as_deref(), call.decided_at, call.settled), (Some("person"), Some(10), true));
        assert_eq!(
            call.admission,
            Some(crate::admission_record::AdmissionRecord::default()),
            "the decision record column is read"
        );
    }

    #[test]
    fn an_error_names_the_operation_the_thread_the_message_and_the_row() {
        let text = |op: Op<'_>| op.error(StoreErrorKind::Other, "detail").message().to_owned();
        assert_eq!(text(Op::thread("messages", "t1")), "messages: thread `t1`: detail");
        assert_eq!(
            text(Op::message("insert_message", "t1", "m1")),
            "insert_message: message `m1` in thread `t1`: detail"
        );
        assert_eq!(text(Op::row("messages", "t1", 3, None)), "messages: row 3 in thread `t1`: detail");
        assert_eq!(
            text(Op::row("messages", "t1", 3, Some("m1"))),
            "messages: message `m1` (row 3) in thread `t1`: detail"
        );
    }

    #[test]
    fn a_json_error_gives_kind_and_place_never_the_text_read() {
        let op = Op::thread("load_thread", "t1");
        let syntax = decode::<Value>(&op, "`arguments` column", &format!("{{\"{SECRET}\": ")).unwrap_err();
        assert_eq!(syntax.kind(), StoreErrorKind::Corrupt);
        assert!(syntax.message().contains("the stored `arguments` column holds truncated JSON at line 1"), "{syntax}");
        let shape = decode::<Map<String, Value>>(&op, "`arguments` column", &format!("[\"{SECRET}\"]")).unwrap_err();
        assert!(shape.message().contains("JSON of the wrong shape"), "{shape}");
        let invalid = decode::<Value>(&op, "thread value `k`", &format!("{SECRET}!")).unwrap_err();
        assert!(invalid.message().contains("thread value `k` holds invalid JSON"), "{invalid}");
        for error in [syntax, shape, invalid] {
            assert!(!error.message().contains(SECRET), "{error}");
        }
    }

    #[test]
    fn every_status_goes_through_its_columns_and_back() {
        let op = Op::thread("load_thread", "t1");
        for status in [
            ThreadStatus::Idle,
            ThreadStatus::Running,
            ThreadStatus::AwaitingApproval,
            ThreadStatus::Stopped(StopReason::parse("aborted")),
            ThreadStatus::Failed(FailReason::OwnerLost),
            ThreadStatus::Failed(FailReason::parse("a_reason_of_a_newer_build")),
        ] {
            let (name, reason) = status_columns(&status);
            assert_eq!(super::status(&op, name, reason).unwrap(), status);
        }
    }

    #[test]
    fn an_unknown_status_or_a_missing_reason_is_corrupt() {
        let op = Op::thread("load_thread", "t1");
        let unknown = status(&op, "dancing", None).unwrap_err();
        assert_eq!(unknown.kind(), StoreErrorKind::Corrupt);
        assert_eq!(unknown.message(), "load_thread: thread `t1`: unknown status `dancing`");
        let bare = status(&op, "failed", None).unwrap_err();
        assert_eq!(bare.message(), "load_thread: thread `t1`: status `failed` has no reason");
    }

    #[test]
    fn a_thread_row_becomes_its_record_with_its_values() {
        let op = Op::thread("load_thread", "t1");
        let values = [("a".to_owned(), "1".to_owned()), ("b".to_owned(), r#"{"x":true}"#.to_owned())];
        let record = thread_columns().into_record(&op, values).unwrap();
        let mut expected = ThreadRecord::new("t1", "support", 5);
        expected.user_id = Some("alice".to_owned());
        expected.arguments = serde_json::from_str(r#"{"city":"Lisbon"}"#).unwrap();
        expected.status = ThreadStatus::Failed(FailReason::parse("model_error"));
        expected.values = serde_json::from_str(r#"{"a":1,"b":{"x":true}}"#).unwrap();
        assert_eq!(record, expected);
    }

    #[test]
    fn a_bad_thread_value_is_corrupt_and_named_by_its_key() {
        let op = Op::thread("load_thread", "t1");
        let error = thread_columns().into_record(&op, [("k".to_owned(), SECRET.to_owned())]).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Corrupt);
        assert!(error.message().contains("thread value `k` holds invalid JSON"), "{error}");
        assert!(!error.message().contains(SECRET), "{error}");
    }

    #[test]
    fn every_role_is_read_back_and_an_unknown_one_is_corrupt() {
        let op = Op::thread("messages", "t1");
        for known in [Role::System, Role::User, Role::Assistant, Role::Tool] {
            assert_eq!(role(&op, known.as_str()).unwrap(), known);
        }
        let error = role(&op, "robot").unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Corrupt);
        assert!(error.message().contains("unknown role `robot`"), "{error}");
    }

    #[test]
    fn a_bad_message_row_is_corrupt_naming_its_row_and_id() {
        let mut bad_role = message_row();
        bad_role[1] = Value::from("robot");
        let error = read_message("messages", "t1", &Fake(bad_role)).unwrap_err();
        assert_eq!(error.message(), "messages: message `m1` (row 3) in thread `t1`: unknown role `robot`");
        for depth in [-1, i64::from(u32::MAX) + 1] {
            let mut bad_depth = message_row();
            bad_depth[8] = Value::from(depth);
            let error = read_message("messages", "t1", &Fake(bad_depth)).unwrap_err();
            assert_eq!(error.kind(), StoreErrorKind::Corrupt);
            assert!(error.message().contains("depth is not a non-negative 32-bit integer"), "{error}");
        }
        let mut bad_extra = message_row();
        bad_extra[10] = Value::from(format!("[\"{SECRET}\"]"));
        let error = read_message("messages", "t1", &Fake(bad_extra)).unwrap_err();
        assert!(error.message().contains("(row 3)") && error.message().contains("`extra` column"), "{error}");
        assert!(!error.message().contains(SECRET), "{error}");
    }

    #[test]
    fn a_parked_call_goes_through_its_columns_and_back() {
        let op = Op::thread("parked_tool_calls", "t1");
        let call = parked_columns().into_call(&op).unwrap();
        assert_eq!((call.id.as_str(), call.tool.as_str(), call.position), ("c1", "rm", 1));
        assert_eq!(call.state, ApprovalState::Approved);
        assert_eq!(call.arguments, serde_json::json!({"path": "/"}));
        assert_eq!((call.requested_at, call.decision_reason.as_deref()), (9, Some("fine")));
        assert_eq!(call.result, Some(Value::from("done")));

        let mut with_reasons = call.clone();
        with_reasons.reasons = vec![ApprovalReason::new(Some("guard"), "deletes files")];
        let json = ParkedJson::of(&op, &with_reasons).unwrap();
        let read =
            ParkedColumns { arguments: json.arguments, reasons: json.reasons, result: json.result, ..parked_columns() }
                .into_call(&op)
                .unwrap();
        assert_eq!(read, with_reasons);
    }

    #[test]
    fn a_bad_parked_call_row_is_corrupt() {
        let op = Op::thread("parked_tool_calls", "t1");
        let state = ParkedColumns { state: "maybe".to_owned(), ..parked_columns() }.into_call(&op).unwrap_err();
        assert_eq!(state.kind(), StoreErrorKind::Corrupt);
        assert!(state.message().contains("unknown parked call state `maybe`"), "{state}");
        let position = ParkedColumns { position: -1, ..parked_columns() }.into_call(&op).unwrap_err();
        assert_eq!(position.kind(), StoreErrorKind::Corrupt);
        let result = ParkedColumns { result: Some(SECRET.to_owned()), ..parked_columns() }.into_call(&op).unwrap_err();
        assert!(result.message().contains("result of parked call `c1` holds invalid JSON"), "{result}");
        assert!(!result.message().contains(SECRET), "{result}");
    }

    #[test]
    fn a_user_value_error_names_the_user_and_key_never_the_value() {
        let fail = user_error("user_values", "alice");
        assert_eq!(user_value(&fail, "k", "[1]").unwrap(), serde_json::json!([1]));
        let error = user_value(&fail, "k", SECRET).unwrap_err();
        assert_eq!(error.kind(), StoreErrorKind::Corrupt);
        assert!(error.message().starts_with("user_values: user `alice`: the stored user value `k` holds invalid JSON"));
        assert!(!error.message().contains(SECRET), "{error}");
        assert_eq!(encode_user_value(&fail, "k", &Value::from(2)).unwrap(), "2");
    }
}
