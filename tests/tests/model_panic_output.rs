//! E9 for a model's panic: the runtime's one panic path catches it (the run fails `panicked`
//! and returns, so a caller waiting on it is answered), and its message, which may hold the
//! request's contents, never reaches the process's panic hook (whose default prints to stderr).
//! Alone in its binary: it sets the process-wide panic hook.

use std::sync::Mutex;

use hooks_runtime::model::{Model, ModelError, ModelRequest, ModelStream};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};

static SEEN_BY_APP_HOOK: Mutex<Vec<String>> = Mutex::new(Vec::new());

define_prompt! { name: model_panic_prompt, model: "panicky", prompt: "p" }
define_agent! { name: model_panic_agent, side_a: { prompt: model_panic_prompt, stop_on_response: true } }

/// A model that panics with the request's text in its message, in its stream's first event.
struct PanicsWithContents;

struct PanickingStream(String);

#[hooks_runtime::async_trait]
impl ModelStream for PanickingStream {
    async fn next_event(&mut self) -> Option<Result<hooks_runtime::model::ModelEvent, ModelError>> {
        panic!("a model bug that prints {}", self.0);
    }
}

#[hooks_runtime::async_trait]
impl Model for PanicsWithContents {
    async fn stream(&self, request: ModelRequest) -> Result<Box<dyn ModelStream>, ModelError> {
        let text = request.messages.iter().filter_map(|m| m.content.clone()).collect::<String>();
        Ok(Box::new(PanickingStream(text)))
    }
}

fn payload_text(info: &std::panic::PanicHookInfo<'_>) -> String {
    let payload = info.payload();
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

#[tokio::test]
async fn e9_a_model_panic_settles_the_run_and_never_reaches_the_applications_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        SEEN_BY_APP_HOOK.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(payload_text(info));
    }));
    let runtime = Runtime::builder().agent::<model_panic_agent>().model("panicky", PanicsWithContents).build().unwrap();
    let thread = runtime.create_thread("model_panic_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("s3cr3t-model-9b2c").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::Panicked));
    assert_eq!(thread.status(), ThreadStatus::Failed(FailReason::Panicked));
    let stored = thread.messages().await.unwrap();
    assert!(stored.iter().all(|m| !format!("{m:?}").contains("model bug")), "the panic text was stored: {stored:?}");

    let _ = std::panic::catch_unwind(|| panic!("an application panic"));
    let seen = SEEN_BY_APP_HOOK.lock().unwrap().clone();
    assert!(seen.iter().all(|text| !text.contains("s3cr3t")), "a model's panic message escaped: {seen:?}");
    assert!(seen.iter().any(|text| text == "an application panic"), "the application's hook was bypassed: {seen:?}");
}
