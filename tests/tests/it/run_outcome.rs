//! A failed run is hard to miss: `RunOutcome::into_result` turns it into an error, and the
//! outcome's `Display` says why, without the conversation's contents.

use hooks_runtime::model::{ScriptedModel, ScriptedResponse};
use hooks_runtime::prelude::*;
use hooks_runtime::store::{FailReason, ThreadStatus};
use std::error::Error as _;

use hooks_runtime::model::ModelError;
use hooks_runtime::{RunErrorKind, RunFailed, Runtime, RuntimeError, ThreadOptions};

#[hook(before_create_message, id = "refuse_everything")]
fn refuse_everything(_state: &ThreadState, _message: MessageRecord) -> Result<MessageRecord, HookError> {
    Err(HookError::new("no"))
}

/// Reads a policy file that does not exist, with `?`: the hook's error keeps the `io::Error`.
#[hook(before_create_message, id = "read_missing_policy")]
fn read_missing_policy(_state: &ThreadState, _message: &mut MessageRecord) -> Result<(), HookError> {
    std::fs::read_to_string("/nonexistent/agent-hooks/policy.txt")?;
    Ok(())
}

define_prompt! { name: outcome_prompt, model: "scripted", prompt: "Answer." }
define_prompt! { name: policy_prompt, model: "scripted", prompt: "Answer.", hooks: [read_missing_policy] }
define_agent! { name: policy_agent, side_a: { prompt: policy_prompt, stop_on_response: true } }
// Never added to the runtime.
define_agent! { name: absent_agent, side_a: { prompt: outcome_prompt } }
define_prompt! { name: refusing_prompt, model: "scripted", prompt: "Answer.", hooks: [refuse_everything] }
define_agent! { name: outcome_agent, side_a: { prompt: outcome_prompt, stop_on_response: true } }
define_agent! { name: refusing_agent, side_a: { prompt: refusing_prompt, stop_on_response: true } }

fn runtime(model: ScriptedModel) -> Runtime {
    Runtime::builder()
        .agent::<outcome_agent>()
        .agent::<refusing_agent>()
        .agent::<policy_agent>()
        .model("scripted", model)
        .build()
        .unwrap()
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
    // The typed error: its kind, and the model's error as its source.
    let error = outcome.error.as_ref().unwrap();
    assert_eq!(error.kind(), RunErrorKind::Model);
    let model = error.source().unwrap().downcast_ref::<ModelError>().unwrap();
    assert_eq!(model, &ModelError::other("the scripted model has no response left"));
}

#[tokio::test]
async fn m6_a_hooks_io_error_is_the_source_of_the_prevented_runs_error() {
    let runtime = runtime(ScriptedModel::new([]));
    let thread = runtime.create_thread_for::<policy_agent>(ThreadOptions::default()).await.unwrap();
    let outcome = thread.send("hello").await.unwrap();
    assert_eq!(outcome.status, ThreadStatus::Failed(FailReason::MessageHookError));
    assert!(thread.messages().await.unwrap().is_empty(), "M6: nothing stored");
    let error = outcome.error.clone().expect("the outcome says what prevented the message");
    assert_eq!(error.kind(), RunErrorKind::MessageHookFailed);
    // The sentence is the reason's, not the hook's message (that is for the logs).
    assert_eq!(error.to_string(), "a before_create_message hook prevented the message that would start the run");
    let hook = error.source().unwrap().downcast_ref::<HookError>().expect("the hook's error is the source");
    assert_eq!(hook.message(), "an I/O operation failed: entity not found");
    let io = hook.source().unwrap().downcast_ref::<std::io::Error>().expect("the hook's io::Error is its source");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // Through `into_result()?` too: the failed run's source is the same error.
    let failed = outcome.into_result().unwrap_err();
    let source = failed.source().unwrap().downcast_ref::<hooks_runtime::RunError>().unwrap();
    assert_eq!(source, &error);
}

#[tokio::test]
async fn a_typed_agent_not_added_to_the_runtime_is_an_unknown_agent() {
    let runtime = runtime(ScriptedModel::new([]));
    let error = runtime.create_thread_for::<absent_agent>(ThreadOptions::default()).await.unwrap_err();
    assert_eq!(error, RuntimeError::UnknownAgent("absent_agent".into()));
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
