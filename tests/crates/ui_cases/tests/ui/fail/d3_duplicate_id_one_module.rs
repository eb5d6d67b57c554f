use hooks_runtime::prelude::*;

#[hook(after_create_message, id = "audit_messages")]
fn audit(_state: &ThreadState, _message: &MessageRecord) {}

#[hook(after_update_message, id = "audit_messages")]
fn audit_updates(_state: &ThreadState, _message: &HookMessage) {}

fn main() {}
