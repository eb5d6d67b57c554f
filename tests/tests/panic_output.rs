//! E5 for panics: a hook's caught panic never reaches the process's panic hook (Rust's default
//! one prints the panic's message, which may hold contents, to stderr), while every other panic
//! still does. Alone in its binary: it sets the process-wide panic hook.

use std::sync::Mutex;

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::{Runtime, ThreadOptions};

static SEEN_BY_APP_HOOK: Mutex<Vec<String>> = Mutex::new(Vec::new());

#[hook(filter_messages, id = "panics_with_contents")]
fn panics_with_contents(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    let secret = messages.iter().filter_map(|m| m.content.clone()).collect::<String>();
    panic!("a bug that prints {secret}");
}

define_prompt! { name: panic_prompt, model: "scripted", prompt: "p", hooks: [panics_with_contents] }
define_agent! { name: panic_agent, side_a: { prompt: panic_prompt, stop_on_response: true } }

fn payload_text(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

#[tokio::test]
async fn e5_a_hook_panic_never_reaches_the_applications_panic_hook() {
    // The application's own panic hook, set before the runtime is built.
    std::panic::set_hook(Box::new(|info| {
        SEEN_BY_APP_HOOK.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(payload_text(info));
    }));
    let model = ScriptedModel::new([ScriptedResponse::text("ok")]);
    let runtime = Runtime::builder().agent::<panic_agent>().model("scripted", model).build().unwrap();
    let thread = runtime.create_thread("panic_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("s3cr3t-panic-4e1d").await.unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("ok"), "the panic was the hook's failure");

    // Any other panic still goes to the application's hook.
    let _ = std::panic::catch_unwind(|| panic!("an application panic"));
    let seen = SEEN_BY_APP_HOOK.lock().unwrap().clone();
    assert!(seen.iter().all(|text| !text.contains("s3cr3t")), "a hook's panic message escaped: {seen:?}");
    assert!(seen.iter().any(|text| text == "an application panic"), "the application's hook was bypassed: {seen:?}");
}
