use hooks_runtime::prelude::*;

#[hook(after_create_message, idd = "audit_messages")]
fn audit(_state: &ThreadState, _message: &MessageRecord) {}

fn main() {}
