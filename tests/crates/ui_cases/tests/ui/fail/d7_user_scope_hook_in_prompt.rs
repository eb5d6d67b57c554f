//! D7: a prompt's `hooks` naming a user-scope hook is an error on that name.
use hooks_runtime::prelude::*;

#[hook(user_client_attached, id = "greet_client")]
fn greet_client(_user: &UserState) {}

define_prompt! {
    name: support_prompt,
    model: "m",
    prompt: "Help the customer.",
    hooks: [greet_client],
}

fn main() {}
