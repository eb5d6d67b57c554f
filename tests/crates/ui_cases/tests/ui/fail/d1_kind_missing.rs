use hooks_runtime::prelude::*;

#[hook(id = "audit_messages")]
fn audit(_state: &ThreadState, _message: &MessageRecord) {}

fn main() {}
