use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
async fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Option<Vec<HookMessage>> {
    Some(messages)
}

#[hook(user_client_detached, id = "farewell_client")]
async fn farewell(_user: &UserState) -> Result<String, HookError> {
    Ok(String::new())
}

fn main() {}
