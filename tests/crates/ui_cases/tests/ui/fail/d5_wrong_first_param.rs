use hooks_runtime::prelude::*;

// A thread kind given the user scope's state.
#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(state: &UserState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let _ = state;
    messages
}

fn main() {}
