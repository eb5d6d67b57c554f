use hooks_runtime::prelude::*;

#[hook(prefilter_llm_history, id = "drop_system")]
async fn drop_system(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    messages.clear();
}

fn main() {}
