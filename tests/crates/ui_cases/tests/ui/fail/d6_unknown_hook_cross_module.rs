//! D6: a hook referenced by a path into another module (`hooks::limt`) that names no hook there
//! is an error on that path, and rustc suggests `hooks::limit`.
mod hooks {
    use hooks_runtime::prelude::*;

    #[hook(filter_messages, id = "limit")]
    pub fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
        messages
    }
}

use hooks_runtime::prelude::*;

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [hooks::limt],
}

fn main() {}
