//! D6: a prompt named where a hook is expected is an error on that name, saying it is not a
//! thread hook.
use hooks_runtime::prelude::*;

define_prompt! { name: mail_prompt, model: "m", prompt: "Read mail." }

define_prompt! {
    name: coordinator_prompt,
    model: "m",
    prompt: "Coordinate.",
    hooks: [mail_prompt],
}

fn main() {}
