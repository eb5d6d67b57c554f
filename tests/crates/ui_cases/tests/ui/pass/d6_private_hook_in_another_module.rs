//! D6: a hook whose function is private to its module is listed from another module by its id
//! (ids are unique in the crate, so the id is reachable crate-wide).
use hooks_runtime::prelude::*;

mod hooks {
    use hooks_runtime::prelude::*;

    #[hook(filter_messages, id = "keep_last_ten")]
    fn keep_last_ten(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
        let skip = messages.len().saturating_sub(10);
        messages.drain(..skip);
    }
}

define_prompt! { name: short_memory, model: "m", prompt: "p", hooks: [hooks::keep_last_ten] }

fn main() {
    assert_eq!(<short_memory as Prompt>::DEF.hooks[0].id, "keep_last_ten");
}
