use hooks_runtime::prelude::*;

// User-scope hooks receive only the `UserState`: no context parameter.
#[hook(user_client_attached, id = "welcome_client")]
fn welcome(_user: &UserState, _ctx: &HookExecutionContext) {}

fn main() {}
