//! Tool calls that wait for a person (A1-A5): the records a parked call is stored with
//! ([`ParkedToolCall`], its [`ApprovalState`] and the [`ApprovalReason`]s it waits for), the
//! decision a person makes ([`ApprovalChoice`], for
//! [`Thread::record_decision`](crate::Thread::record_decision)) and why one is refused
//! ([`ApprovalError`]). A `before_tool_call` hook or guard that answers `ToolDecision::Ask`, a
//! settings file's `ask`, `authorize_tools` (its reason under the hook id `authorize_tools`) or
//! a tool's `requires_approval` answering `Ask` parks a call; `thread.pending_approvals()`
//! lists the calls that wait, and `thread.approve(..)`, `thread.approve_with(..)` (the edited
//! arguments governed again) or `thread.deny(..)` decides one. Reasons are capped at
//! [`MAX_REASON_BYTES`].
//!
//! ```
//! use hooks_runtime::approvals::{ApprovalChoice, ApprovalReason};
//!
//! let reason = ApprovalReason::new(Some("payment_limit"), "payments over 100 need a person");
//! assert_eq!(reason.hook.as_deref(), Some("payment_limit"));
//! let choice = ApprovalChoice::Deny { reason: "not this account".into() };
//! assert!(matches!(choice, ApprovalChoice::Deny { .. }));
//! ```

pub use crate::admission_record::{ApprovalMatcher, RememberScope};
pub use crate::approval_records::{
    ApprovalDecision, ApprovalOutcome, ApprovalReason, ApprovalState, ParkedToolCall, ToolCallChange,
};
pub use crate::governing::caps::MAX_REASON_BYTES;
pub use crate::remembered_approvals::{Remember, RememberedApproval};
pub use crate::thread::{ApprovalChoice, ApprovalError};
