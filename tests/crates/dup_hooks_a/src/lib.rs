//! Defines `audit_messages`, as `dup_hooks_b` does: linked together they must fail verification.

use hooks_runtime::prelude::*;

/// Counts created messages.
#[hook(after_create_message, id = "audit_messages")]
pub fn audit(_state: &ThreadState, _message: &MessageRecord) {}
