use serde::{Deserialize, Serialize};

/// What a `before_tool_call` hook decides about one tool call.
///
/// Decisions of a chain combine deny > ask > allow: a `Deny` ends the chain, a later `Deny`
/// overrides an earlier `Ask`, and an `Allow` never overrides either.
///
/// ```
/// use hooks_runtime::types::ToolDecision;
///
/// let decision = ToolDecision::ask("payments over 100 need a person");
/// assert_eq!(decision.reason(), Some("payments over 100 need a person"));
/// assert!(ToolDecision::deny("no").overrides(&decision));
/// assert!(!ToolDecision::allow().overrides(&decision));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolDecision {
    /// The call may run (as far as this hook is concerned).
    Allow,
    /// The call does not run; the model gets an error result carrying `reason`.
    Deny {
        /// Why, as the model and the stored result see it.
        reason: String,
    },
    /// A person decides: the call waits for an approval.
    Ask {
        /// Why, as the person deciding sees it.
        reason: String,
    },
}

impl ToolDecision {
    /// The call may run.
    pub fn allow() -> Self {
        ToolDecision::Allow
    }

    /// The call does not run, for `reason`.
    pub fn deny(reason: impl Into<String>) -> Self {
        ToolDecision::Deny { reason: reason.into() }
    }

    /// A person decides whether the call runs, told `reason`.
    pub fn ask(reason: impl Into<String>) -> Self {
        ToolDecision::Ask { reason: reason.into() }
    }

    /// The reason of a `Deny` or `Ask`.
    pub fn reason(&self) -> Option<&str> {
        match self {
            ToolDecision::Allow => None,
            ToolDecision::Deny { reason } | ToolDecision::Ask { reason } => Some(reason),
        }
    }

    /// Whether this decision takes precedence over `other` (deny > ask > allow).
    pub fn overrides(&self, other: &ToolDecision) -> bool {
        self.rank() > other.rank()
    }

    fn rank(&self) -> u8 {
        match self {
            ToolDecision::Allow => 0,
            ToolDecision::Ask { .. } => 1,
            ToolDecision::Deny { .. } => 2,
        }
    }
}

/// What a `before_tool_call` hook that fails, times out or panics decides: written as
/// `on_failure = deny` or `on_failure = allow` in `#[hook]`, where it is required.
///
/// ```
/// use hooks_runtime::definition::OnFailure;
///
/// assert_eq!(OnFailure::Deny.as_str(), "deny");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OnFailure {
    /// Fail closed: the call is denied.
    Deny,
    /// Fail open: the call goes on as if the hook had allowed it.
    Allow,
}

impl OnFailure {
    /// `"deny"` or `"allow"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OnFailure::Deny => "deny",
            OnFailure::Allow => "allow",
        }
    }
}
