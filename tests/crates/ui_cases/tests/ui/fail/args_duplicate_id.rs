use hooks_runtime::prelude::*;

#[hook(after_create_message, id = "audit_messages", id = "audit_messages_again")]
fn audit(_state: &ThreadState, _message: &MessageRecord) {}

fn main() {}
