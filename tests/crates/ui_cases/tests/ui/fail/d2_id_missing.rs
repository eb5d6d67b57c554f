use hooks_runtime::prelude::*;

#[hook(after_create_message, timeout_ms = 500)]
async fn audit(_state: &ThreadState, _message: &MessageRecord) {}

fn main() {}
