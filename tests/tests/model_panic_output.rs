//! E9 for a model's panic: the runtime's one panic path catches it (the run fails `panicked`
//! and returns, so a caller waiting on it is answered), and its message, which may hold the
//! request's contents, never reaches the process's panic hook (whose default prints to stderr).
//! Alone in its binary: it sets the process-wide panic hook.

mod support_panic_hook;

use hooks_runtime::model::{Model, ModelError, ModelRequest, ModelStream};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use hooks_runtime::{Runtime, ThreadOptions};
use support_panic_hook::{assert_only_the_application_panic_reached_the_hook, set_recording_hook};

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

#[tokio::test]
async fn e9_a_model_panic_settles_the_run_and_never_reaches_the_applications_panic_hook() {
    // The application's own panic hook, set before the runtime is built.
    set_recording_hook();
    let runtime = Runtime::builder().agent::<model_panic_agent>().model("panicky", PanicsWithContents).build().unwrap();
    let thread = runtime.create_thread("model_panic_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("s3cr3t-model-9b2c").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::Panicked));
    assert_eq!(thread.status(), ThreadStatus::Failed(FailReason::Panicked));
    let stored = thread.messages().await.unwrap();
    assert!(stored.iter().all(|m| !format!("{m:?}").contains("model bug")), "the panic text was stored: {stored:?}");

    // Any other panic still goes to the application's hook.
    assert_only_the_application_panic_reached_the_hook("s3cr3t", "a model's");
}
