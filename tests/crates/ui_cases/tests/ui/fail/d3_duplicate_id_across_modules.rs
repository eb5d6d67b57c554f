mod first {
    use hooks_runtime::prelude::*;

    #[hook(after_create_message, id = "audit_messages")]
    pub fn audit(_state: &ThreadState, _message: &MessageRecord) {}
}

mod second {
    use hooks_runtime::prelude::*;

    #[hook(after_update_message, id = "audit_messages")]
    pub fn audit(_state: &ThreadState, _message: &HookMessage) {}
}

fn main() {}
