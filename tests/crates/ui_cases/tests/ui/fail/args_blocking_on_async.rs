use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "fetch_policy", blocking)]
async fn fetch_policy(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    messages.clear();
}

fn main() {}
