//! D11: a `parent_hooks` requirement naming a user-scope hook is an error on that name.
use hooks_runtime::prelude::*;

#[hook(user_value_changed, id = "track_mail_setting")]
fn track_mail_setting(_user: &UserState) {}

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_agent! {
    name: mail_agent,
    expose_as_tool: true,
    parent_hooks: [{ hook: track_mail_setting, reason: "Follows the user's mail settings." }],
    side_a: { prompt: mail_prompt },
    side_b: { human: true },
}

fn main() {}
