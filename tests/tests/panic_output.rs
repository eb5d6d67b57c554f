//! E5 for panics: a hook's caught panic never reaches the process's panic hook (Rust's default
//! one prints the panic's message, which may hold contents, to stderr), while every other panic
//! still does. Alone in its binary: it sets the process-wide panic hook.

mod support_panic_hook;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};
use support_panic_hook::{assert_only_the_application_panic_reached_the_hook, set_recording_hook};

#[hook(filter_messages, id = "panics_with_contents")]
fn panics_with_contents(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    let secret = messages.iter().filter_map(|m| m.content.clone()).collect::<String>();
    panic!("a bug that prints {secret}");
}

define_prompt! { name: panic_prompt, model: "scripted", prompt: "p", hooks: [panics_with_contents] }
define_agent! { name: panic_agent, side_a: { prompt: panic_prompt, stop_on_response: true } }

#[tokio::test]
async fn e5_a_hook_panic_never_reaches_the_applications_panic_hook() {
    // The application's own panic hook, set before the runtime is built.
    set_recording_hook();
    let model = ScriptedModel::new([ScriptedResponse::text("ok")]);
    let runtime = Runtime::builder().agent::<panic_agent>().model("scripted", model).build().unwrap();
    let thread = runtime.create_thread("panic_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("s3cr3t-panic-4e1d").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("ok"), "the panic was the hook's failure");

    // Any other panic still goes to the application's hook.
    assert_only_the_application_panic_reached_the_hook("s3cr3t", "a hook's");
}
