use hooks_runtime::prelude::*;

#[hook(after_create_message, id = "audit_messages", timeout_ms = "5")]
async fn audit(_state: &ThreadState, _message: &MessageRecord) {}

fn main() {}
