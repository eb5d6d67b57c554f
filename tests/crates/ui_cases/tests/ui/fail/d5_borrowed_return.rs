use hooks_runtime::prelude::*;

#[hook(after_system_message, id = "shorten_system")]
fn shorten(_state: &ThreadState, system: &str) -> &str {
    &system[..10]
}

fn main() {}
