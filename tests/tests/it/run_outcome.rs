//! A failed run is hard to miss: `RunOutcome::into_result` turns it into an error, and the
//! outcome's `Display` says why, without the conversation's contents.

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use hooks_runtime::{RunFailed, Runtime, ThreadOptions};

#[hook(before_create_message, id = "refuse_everything")]
fn refuse_everything(_state: &ThreadState, _message: MessageRecord) -> Result<MessageRecord, HookError> {
    Err(HookError::new("no"))
}

define_prompt! { name: outcome_prompt, model: "scripted", prompt: "Answer." }
define_prompt! { name: refusing_prompt, model: "scripted", prompt: "Answer.", hooks: [refuse_everything] }
define_agent! { name: outcome_agent, side_a: { prompt: outcome_prompt, stop_on_response: true } }
define_agent! { name: refusing_agent, side_a: { prompt: refusing_prompt, stop_on_response: true } }

fn runtime(model: ScriptedModel) -> Runtime {
    Runtime::builder().agent::<outcome_agent>().agent::<refusing_agent>().model("scripted", model).build().unwrap()
}

#[tokio::test]
async fn a_model_failure_is_an_error_from_into_result_that_says_why() {
    // No scripted response left: the model step fails, as an HTTP 500 would.
    let runtime = runtime(ScriptedModel::new([]));
    let thread = runtime.create_thread("outcome_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("a private question").await.expect("the runtime itself did not fail");
    assert!(outcome.is_failed());
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::ModelError));
    let said = outcome.to_string();
    assert_eq!(
        said,
        "the run failed (model_error) after 1 model step: model error: the scripted model has no response left"
    );
    let failed: RunFailed = outcome.clone().into_result().unwrap_err();
    assert_eq!(failed.reason(), &FailReason::ModelError);
    assert_eq!(failed.to_string(), said);
    assert_eq!(format!("{failed:?}"), said, "a `main` returning it prints the sentence");
    assert_eq!(failed.into_outcome(), outcome);
    assert!(!said.contains("private"), "no contents");
}

#[tokio::test]
async fn a_prevented_message_is_a_failure_whose_reason_is_explained() {
    let runtime = runtime(ScriptedModel::new([]));
    let thread = runtime.create_thread("refusing_agent", ThreadOptions::default()).await.unwrap();
    let failed = thread.send("hello").await.unwrap().into_result().unwrap_err();
    assert_eq!(failed.reason(), &FailReason::MessageHookError);
    assert_eq!(
        failed.to_string(),
        "the run failed (message_hook_error) after 0 model steps: a before_create_message hook prevented the \
         message that would start the run"
    );
}

#[tokio::test]
async fn a_completed_run_is_ok_and_says_so() {
    let runtime = runtime(ScriptedModel::new([ScriptedResponse::text("fine")]));
    let thread = runtime.create_thread("outcome_agent", ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap().into_result().unwrap();
    assert_eq!(outcome.reply.as_deref(), Some("fine"));
    assert_eq!(outcome.to_string(), "the run completed after 1 model step");
}
