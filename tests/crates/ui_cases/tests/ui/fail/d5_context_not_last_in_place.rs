//! D5: an in-place hook with its context out of place is shown the in-place signature, the
//! form it was written in.
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, _ctx: &HookExecutionContext, messages: &mut Vec<HookMessage>) {
    keep_last_messages(messages, 20);
}

fn main() {}
