//! The approval records a parked tool call is stored with (A1, A2). The thread pipelines, the
//! events and the stores all use them, so they live below all three: this module imports none
//! of them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How long after a parked step's last decision recovery leaves the turn to the decider, which
/// resumes it at once; a decider that died in between leaves it to recovery after this (O6).
pub(crate) const RESUME_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Who asked for an approval and why: a `before_tool_call` hook or guard by its id, a settings
/// file's `PreToolUse` hook by `settings:` and its place in the file
/// (`settings:hooks.PreToolUse[0].hooks[0]`), or the tool itself (`Tool::requires_approval`,
/// `hook` `None`).
///
/// ```
/// use hooks_runtime::approvals::ApprovalReason;
///
/// let reason = ApprovalReason::new(Some("payment_limit"), "payments over 100 need a person");
/// assert_eq!(reason.hook.as_deref(), Some("payment_limit"));
/// assert_eq!(reason.context, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalReason {
    /// The id of the hook that asked; `None` when the tool requires approval itself.
    pub hook: Option<String>,
    /// Why, as the person deciding reads it.
    pub reason: String,
    /// Words for the model that a settings file's `PreToolUse` hooks gave with the call
    /// (`additionalContext`): added to the tool's result if the call is approved. A parked call
    /// carries them on its first reason, since they belong to the call, not to a decider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl ApprovalReason {
    /// A reason from `hook` (or from the tool, with `None`).
    pub fn new(hook: Option<&str>, reason: impl Into<String>) -> Self {
        ApprovalReason { hook: hook.map(str::to_owned), reason: reason.into(), context: None }
    }

    /// The same reason, carrying `context` for the model.
    ///
    /// ```
    /// use hooks_runtime::approvals::ApprovalReason;
    ///
    /// let reason = ApprovalReason::new(Some("settings:hooks.PreToolUse[0].hooks[0]"), "force push")
    ///     .with_context("the branch is protected upstream");
    /// assert_eq!(reason.context.as_deref(), Some("the branch is protected upstream"));
    /// ```
    #[must_use]
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.context = Some(context.into());
        self
    }
}

/// Where a parked tool call stands. A call moves only forward, each move one conditional write
/// in the store: `pending` to `approved` or `denied` (the decision), `approved` to `running`
/// (before the tool runs), then `done` once its result is kept.
///
/// ```
/// use hooks_runtime::approvals::ApprovalState;
///
/// assert_eq!(ApprovalState::Pending.as_str(), "pending");
/// assert_eq!(ApprovalState::from_name("running"), Some(ApprovalState::Running));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalState {
    /// Waiting for a person.
    Pending,
    /// Approved; the tool has not started.
    Approved,
    /// Denied; the tool never runs.
    Denied,
    /// The tool is running (or was, when its process stopped).
    Running,
    /// Its result is kept, waiting to be stored in the model's call order.
    Done,
}

impl ApprovalState {
    /// The state as stored: `pending`, `approved`, `denied`, `running` or `done`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved => "approved",
            ApprovalState::Denied => "denied",
            ApprovalState::Running => "running",
            ApprovalState::Done => "done",
        }
    }

    /// The state stored as `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Pending, Self::Approved, Self::Denied, Self::Running, Self::Done]
            .into_iter()
            .find(|state| state.as_str() == name)
    }
}

/// One tool call of a step that waits for approvals, as the store keeps it with its thread.
///
/// Every call of the step from the first one that waits on is parked, in the model's call
/// order (`position`), so that the results are stored in that order once every call is decided;
/// a call the gate allowed or denied is parked `done`, with its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ParkedToolCall {
    /// The tool call's id, as the model gave it.
    pub id: String,
    /// The tool's name.
    pub tool: String,
    /// The arguments the tool is to run with: as the hooks left them, or as edited on approval.
    pub arguments: Value,
    /// Why it waits (empty for a call that did not wait).
    pub reasons: Vec<ApprovalReason>,
    /// When it was parked, milliseconds since the Unix epoch.
    pub requested_at: i64,
    /// Where it stands.
    pub state: ApprovalState,
    /// Its place among the step's calls, from 0.
    pub position: u32,
    /// The reason a person gave with a denial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_reason: Option<String>,
    /// The kept result of a `done` call: the tool result as the hooks left it, and whether it is
    /// a denial (`denied`) or an interruption (`interrupted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Who decided it (O7): `person` for a decision through [`Thread::record_decision`]
    /// (or `approve`, `deny`, the server's approval routes), `abort` for a call an abort denied,
    /// or the id of the hook that decided it; `None` while it waits, and for a call that never
    /// waited (the gate allowed or denied it).
    ///
    /// [`Thread::record_decision`]: crate::Thread::record_decision
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// When it was decided, milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    /// Whether its step is finished (every result of the step stored): a settled call no longer
    /// waits or runs, and stays readable through [`Thread::approval`](crate::Thread::approval)
    /// as the ledger of what was decided and what became of it.
    #[serde(default)]
    pub settled: bool,
    /// How it was admitted (G15): every decider of the admission pipeline that answered, in
    /// order, with the arguments' hashes; the record its stored result will carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission: Option<crate::admission_record::AdmissionRecord>,
}

/// What became of a decided call (O7), from its kept result.
///
/// ```
/// use hooks_runtime::approvals::{ApprovalOutcome, ApprovalState, ParkedToolCall};
///
/// let call = ParkedToolCall::new("call_1", "refund", serde_json::json!({}), 0, ApprovalState::Pending);
/// assert_eq!(call.outcome(), None, "a waiting call has no outcome yet");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalOutcome {
    /// The tool ran; its result (a success or the tool's own error) is stored.
    Ran,
    /// The call never ran: denied by a person, a hook, the gate or an abort.
    Denied,
    /// The tool was running when its process stopped; it never runs again, and the model was
    /// told that it may or may not have taken effect.
    Interrupted,
}

impl ApprovalOutcome {
    /// The outcome as JSON names it: `ran`, `denied` or `interrupted`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ApprovalOutcome::Ran => "ran",
            ApprovalOutcome::Denied => "denied",
            ApprovalOutcome::Interrupted => "interrupted",
        }
    }
}

impl ParkedToolCall {
    /// A call parked at `position` in `state`.
    pub fn new(
        id: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
        position: u32,
        state: ApprovalState,
    ) -> Self {
        ParkedToolCall {
            id: id.into(),
            tool: tool.into(),
            arguments,
            reasons: Vec::new(),
            requested_at: 0,
            state,
            position,
            decision_reason: None,
            result: None,
            decided_by: None,
            decided_at: None,
            settled: false,
            admission: None,
        }
    }

    /// The SHA-256 (lower-case hex) of the arguments the call waits with, over their canonical
    /// JSON (compact, every object's keys sorted; the hash of the decision record, G15). A
    /// decision names it to approve exactly these arguments (A7): computed from the stored
    /// arguments, so every store and every process gives the same hash for the same call.
    ///
    /// ```
    /// use hooks_runtime::approvals::{ApprovalState, ParkedToolCall};
    ///
    /// let call = ParkedToolCall::new("call_1", "pay", serde_json::json!({"b": 2, "a": 1}), 0, ApprovalState::Pending);
    /// // `printf '{"a":1,"b":2}' | sha256sum`
    /// assert_eq!(call.arguments_sha256(), "43258cff783fe7036d8a43033f830adfc60ec037382473548ac742b888292777");
    /// ```
    pub fn arguments_sha256(&self) -> String {
        crate::admission_record::Hashed::of(&self.arguments).0
    }

    /// The fingerprint of the policy the call was governed under when it parked (A7): the
    /// SHA-256 of the admission pipeline's deciders in order, each with what it applies (the
    /// permission rules' texts, the runtime-wide guards' ids). Kept in its decision record;
    /// `None` for a call that did not wait, or parked by an older build.
    ///
    /// ```
    /// use hooks_runtime::approvals::{ApprovalState, ParkedToolCall};
    ///
    /// let call = ParkedToolCall::new("call_1", "pay", serde_json::json!({}), 0, ApprovalState::Pending);
    /// assert_eq!(call.policy_fingerprint(), None, "a call built by hand was never governed");
    /// ```
    pub fn policy_fingerprint(&self) -> Option<&str> {
        self.admission.as_ref()?.policy_fingerprint.as_deref()
    }

    /// What became of the call once its result is kept (`done`), or of a denied one: `None`
    /// while it waits, is approved, or runs.
    pub fn outcome(&self) -> Option<ApprovalOutcome> {
        match self.state {
            ApprovalState::Denied => Some(ApprovalOutcome::Denied),
            ApprovalState::Done => {
                let flag = |name: &str| {
                    self.result.as_ref().and_then(|kept| kept.get(name)).and_then(Value::as_bool).unwrap_or(false)
                };
                Some(if flag("interrupted") {
                    ApprovalOutcome::Interrupted
                } else if flag("denied") {
                    ApprovalOutcome::Denied
                } else {
                    ApprovalOutcome::Ran
                })
            }
            _ => None,
        }
    }
}

/// A person's decision on a pending call, as `approval_resolved` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalDecision {
    /// The call runs.
    Approved,
    /// The call does not run.
    Denied,
}

/// One move of a parked call, the whole of what a store's
/// [`advance_tool_call`](crate::store::ApprovalStore::advance_tool_call) writes in its one
/// conditional write: which call, the state it must be in for the move (`from`: of two
/// deciders, the second finds the call moved on and writes nothing), its new state, and the
/// fields that move sets.
///
/// ```
/// use hooks_runtime::approvals::{ApprovalState, ToolCallChange};
///
/// let change = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Denied).with_reason("not today");
/// assert_eq!((change.from, change.state), (ApprovalState::Pending, ApprovalState::Denied));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCallChange {
    /// The call that moves: its id, as the model gave it.
    pub call_id: String,
    /// The state the call must be in: the move is written from this state only.
    pub from: ApprovalState,
    /// The state the call moves to.
    pub state: ApprovalState,
    /// New arguments (edited on approval).
    pub arguments: Option<Value>,
    /// The reason given with a denial.
    pub decision_reason: Option<String>,
    /// The kept result (moving to `done`).
    pub result: Option<Value>,
    /// Who decides (moving from `pending`), as [`ParkedToolCall::decided_by`] keeps it.
    pub decided_by: Option<String>,
    /// When, set with `decided_by`.
    pub decided_at: Option<i64>,
}

impl ToolCallChange {
    /// A move of call `call_id` from state `from` to state `to` that sets nothing else.
    pub fn new(call_id: impl Into<String>, from: ApprovalState, to: ApprovalState) -> Self {
        ToolCallChange {
            call_id: call_id.into(),
            from,
            state: to,
            arguments: None,
            decision_reason: None,
            result: None,
            decided_by: None,
            decided_at: None,
        }
    }

    /// Sets who decides (`person`, `abort`, or a hook's id), and that it is decided now.
    ///
    /// ```
    /// use hooks_runtime::approvals::{ApprovalState, ToolCallChange};
    ///
    /// let change = ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved).by("person");
    /// assert_eq!(change.decided_by.as_deref(), Some("person"));
    /// ```
    pub fn by(mut self, decider: impl Into<String>) -> Self {
        self.decided_by = Some(decider.into());
        self.decided_at = Some(crate::ids::now_ms());
        self
    }

    /// Sets the arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// Sets the denial's reason.
    #[must_use]
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.decision_reason = Some(reason.into());
        self
    }

    /// Sets the kept result.
    #[must_use]
    pub fn with_result(mut self, result: Value) -> Self {
        self.result = Some(result);
        self
    }

    /// Whether the move starts at `call` (for stores that keep calls as values): the call it
    /// names, in state `from`, its step not settled.
    ///
    /// ```
    /// use hooks_runtime::approvals::{ApprovalState, ParkedToolCall, ToolCallChange};
    ///
    /// let call = ParkedToolCall::new("call_1", "refund", serde_json::json!({}), 0, ApprovalState::Pending);
    /// assert!(ToolCallChange::new("call_1", ApprovalState::Pending, ApprovalState::Approved).applies_to(&call));
    /// assert!(!ToolCallChange::new("call_1", ApprovalState::Approved, ApprovalState::Running).applies_to(&call));
    /// ```
    pub fn applies_to(&self, call: &ParkedToolCall) -> bool {
        !call.settled && call.id == self.call_id && call.state == self.from
    }

    /// Applies the move to `call` (for stores that keep calls as values), whose state and id
    /// [`applies_to`](Self::applies_to) checked.
    pub fn apply(&self, call: &mut ParkedToolCall) {
        call.state = self.state;
        if let Some(arguments) = &self.arguments {
            call.arguments = arguments.clone();
        }
        if let Some(reason) = &self.decision_reason {
            call.decision_reason = Some(reason.clone());
        }
        if let Some(result) = &self.result {
            call.result = Some(result.clone());
        }
        if let Some(decider) = &self.decided_by {
            call.decided_by = Some(decider.clone());
        }
        if let Some(at) = self.decided_at {
            call.decided_at = Some(at);
        }
    }
}
