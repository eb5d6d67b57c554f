//! Defines `audit_messages`, as `dup_hooks_a` does: linked together they must fail verification.

use hooks_runtime::prelude::*;

/// Logs created messages.
#[hook(after_create_message, id = "audit_messages")]
pub async fn audit_async(_state: &ThreadState, _message: &MessageRecord) {}
