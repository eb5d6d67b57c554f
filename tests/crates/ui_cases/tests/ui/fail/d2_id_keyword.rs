use hooks_runtime::prelude::*;

#[hook(after_create_message, id = "type")]
fn audit(_state: &ThreadState, _message: &MessageRecord) {}

fn main() {}
