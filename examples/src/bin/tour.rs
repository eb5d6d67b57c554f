//! The tour: defines hooks and shows what the framework knows about them.

use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let skip = messages.len().saturating_sub(20);
    messages.into_iter().skip(skip).collect()
}

fn main() {
    let registry = Registry::linked();
    for def in registry.hooks() {
        println!("{:<28} {:<24} {}", def.id, def.kind(), def.location);
    }
}
