use hooks_runtime::prelude::*;

// A plain sync hook runs to its end: nothing could enforce this timeout.
#[hook(before_create_message, id = "require_content", timeout_ms = 200)]
fn require_content(_state: &ThreadState, message: &mut MessageRecord) -> Result<(), HookError> {
    match message.content.as_deref() {
        Some("") => Err(HookError::new("empty messages are not stored")),
        _ => Ok(()),
    }
}

fn main() {}
