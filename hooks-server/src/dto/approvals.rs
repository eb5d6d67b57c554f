//! Approvals: `GET /threads/{id}/approvals`, `POST /threads/{id}/approvals/{callId}` and the
//! remembered ones, `GET /approvals/remembered` and `DELETE /approvals/remembered/{id}`.

use std::fmt;

use hooks_runtime::approvals::{ApprovalMatcher, ApprovalReason, ParkedToolCall, RememberedApproval};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::request_body::RequestBody;

/// `POST /threads/{id}/approvals/{callId}`: `{"decision", "arguments_sha256", "reason"?,
/// "arguments"?}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecisionRequest {
    pub(crate) decision: Decision,
    /// The SHA-256 of the arguments the person decided on, as the listing gave it (A7).
    pub(crate) arguments_sha256: String,
    /// With a denial: the reason the model reads.
    #[serde(default)]
    pub(crate) reason: Option<String>,
    /// With an approval: the call's arguments as the person edited them.
    #[serde(default)]
    pub(crate) arguments: Option<Map<String, Value>>,
    /// With an approval: remember it beyond this call (A9).
    #[serde(default)]
    pub(crate) remember: Option<RememberRequest>,
}

/// `remember` of a decision: `{"scope": "once" | "thread" | "user" | "always", "pattern"?}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RememberRequest {
    /// The scope's word; checked by the handler, whose error names the words it takes.
    pub(crate) scope: String,
    /// A rule in the permission-rule syntax; none for the exact arguments.
    #[serde(default)]
    pub(crate) pattern: Option<String>,
}

impl RequestBody for DecisionRequest {
    const WHAT: &'static str = "an approval decision";
}

/// What a person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Approve,
    Deny,
}

impl Decision {
    /// The word of the answer's `decision`: `approved` or `denied`.
    pub(crate) fn past_tense(self) -> &'static str {
        match self {
            Decision::Approve => "approved",
            Decision::Deny => "denied",
        }
    }
}

/// By hand rather than derived: a derived enum's errors say `string or map` for a value of
/// the wrong type, and its own text for an unknown word names the word (which may be anything
/// the client sent). This visitor's only description is the two words it takes.
impl<'de> Deserialize<'de> for Decision {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Words;
        impl Visitor<'_> for Words {
            type Value = Decision;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`\"approve\"` or `\"deny\"`")
            }
            fn visit_str<E: de::Error>(self, word: &str) -> Result<Decision, E> {
                match word {
                    "approve" => Ok(Decision::Approve),
                    "deny" => Ok(Decision::Deny),
                    _ => Err(E::invalid_value(de::Unexpected::Other("another string"), &self)),
                }
            }
        }
        deserializer.deserialize_str(Words)
    }
}

/// `GET /threads/{id}/approvals`.
#[derive(Debug, Serialize)]
pub(crate) struct ApprovalList<'a> {
    pub(crate) approvals: Vec<WaitingCall<'a>>,
}

/// One waiting call: the fields of its `approval_requested` event, what the person decides on.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WaitingCall<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: &'a str,
    /// The model's arguments, as the tool takes them.
    pub(crate) arguments: &'a Value,
    pub(crate) reasons: &'a [ApprovalReason],
    pub(crate) requested_at: i64,
    /// The SHA-256 of `arguments` (canonical JSON), which a decision sends back (A7).
    #[serde(rename = "arguments_sha256")]
    pub(crate) arguments_sha256: String,
}

impl<'a> From<&'a ParkedToolCall> for WaitingCall<'a> {
    fn from(call: &'a ParkedToolCall) -> Self {
        WaitingCall {
            id: &call.id,
            name: &call.tool,
            arguments: &call.arguments,
            reasons: &call.reasons,
            requested_at: call.requested_at,
            arguments_sha256: call.arguments_sha256(),
        }
    }
}

/// The answer to a decision: 202 with the resumed run's id when it was the step's last, 200
/// with `runId` `null` and the calls still waiting otherwise.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DecisionAnswer {
    pub(crate) call_id: String,
    pub(crate) decision: &'static str,
    pub(crate) run_id: Option<String>,
    pub(crate) pending: Vec<String>,
    /// The approval remembered with the decision, if one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) remembered: Option<RememberedView<'static>>,
}

/// `GET /approvals/remembered`: the caller's remembered approvals, oldest first.
#[derive(Debug, Serialize)]
pub(crate) struct RememberedList<'a> {
    pub(crate) remembered: Vec<RememberedView<'a>>,
}

/// One remembered approval, as the owner sees it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RememberedView<'a> {
    pub(crate) id: std::borrow::Cow<'a, str>,
    pub(crate) scope: &'static str,
    pub(crate) tool: std::borrow::Cow<'a, str>,
    /// `{"kind": "arguments", "sha256"}` or `{"kind": "pattern", "rule"}`.
    pub(crate) matcher: std::borrow::Cow<'a, ApprovalMatcher>,
    /// The thread a `thread` approval answers.
    pub(crate) thread_id: Option<std::borrow::Cow<'a, str>>,
    pub(crate) created_at: i64,
    pub(crate) created_by: std::borrow::Cow<'a, str>,
}

impl<'a> From<&'a RememberedApproval> for RememberedView<'a> {
    fn from(approval: &'a RememberedApproval) -> Self {
        use std::borrow::Cow::Borrowed;
        RememberedView {
            id: Borrowed(&approval.id),
            scope: approval.scope.as_str(),
            tool: Borrowed(&approval.tool),
            matcher: Borrowed(&approval.matcher),
            thread_id: approval.thread_id.as_deref().map(Borrowed),
            created_at: approval.created_at,
            created_by: Borrowed(&approval.created_by),
        }
    }
}

impl RememberedView<'static> {
    /// The view of `approval`, owning its parts.
    pub(crate) fn owned(approval: RememberedApproval) -> Self {
        use std::borrow::Cow::Owned;
        RememberedView {
            scope: approval.scope.as_str(),
            id: Owned(approval.id),
            tool: Owned(approval.tool),
            matcher: Owned(approval.matcher),
            thread_id: approval.thread_id.map(Owned),
            created_at: approval.created_at,
            created_by: Owned(approval.created_by),
        }
    }
}
