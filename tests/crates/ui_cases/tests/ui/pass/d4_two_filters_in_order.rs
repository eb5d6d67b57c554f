//! D4: two `filter_messages` hooks with distinct ids coexist in one prompt's `hooks`, and the
//! prompt's definition keeps them in the order listed (which is the order they run in).
use hooks_runtime::prelude::*;

#[hook(filter_messages, id = "limit_to_20_messages")]
fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    let skip = messages.len().saturating_sub(20);
    messages.into_iter().skip(skip).collect()
}

#[hook(filter_messages, id = "remove_system_messages")]
async fn remove_system(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
    messages.into_iter().filter(|m| m.role != Role::System).collect()
}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [limit_to_20_messages, remove_system_messages],
}

define_prompt! {
    name: reversed_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [remove_system_messages, limit_to_20_messages],
}

fn ids(prompt: &hooks_runtime::definition::PromptDef) -> Vec<&'static str> {
    prompt.hooks.iter().map(|hook| hook.id).collect()
}

fn main() {
    let def = <support_prompt as Prompt>::DEF;
    assert_eq!(ids(def), ["limit_to_20_messages", "remove_system_messages"]);
    assert!(def.hooks.iter().all(|hook| hook.kind() == HookKind::FilterMessages));
    assert_eq!(ids(<reversed_prompt as Prompt>::DEF), ["remove_system_messages", "limit_to_20_messages"]);
}
