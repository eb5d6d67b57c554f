//! Governing tool calls (clauses G and A): the gate every tool call passes before it runs, the
//! runtime-wide guards, the tools' schemas, and the approvals a parked call waits for.

mod approval;
pub(crate) mod gate;
pub(crate) mod guard;
pub(crate) mod schema;

pub use approval::{ApprovalDecision, ApprovalError, ApprovalReason, ApprovalState, ParkedToolCall, ToolCallChange};
