//! One governing decision (G6): a `before_tool_call` hook or runtime-wide guard called with its
//! panics caught and under its timeout, through the same path as every other hook, its answer
//! handed back beside the `()` that path carries.

use std::time::Duration;

use hooks_core::__private::BoxedHookFuture;
use hooks_core::{HookError, HookResult, ToolDecision};

use super::invoke::{self, Answer, HookClock, HookFailure, InFlight, Started};

/// What a governing hook's adapter answered: a sync hook's decision, or an async hook's future.
pub(crate) enum Decided<'a> {
    /// The sync hook's outcome.
    Ready(HookResult<ToolDecision>),
    /// The async hook's future.
    Pending(BoxedHookFuture<'a, HookResult<ToolDecision>>),
}

/// Runs `call` as hook code: its decision, or why it has none.
pub(crate) async fn decide<'a>(
    blocking: bool,
    timeout: Duration,
    call: impl FnOnce() -> Decided<'a>,
) -> Result<ToolDecision, HookFailure> {
    let mut answer: Option<ToolDecision> = None;
    {
        let slot = &mut answer;
        let started = invoke::start_with(blocking, timeout, move || match call() {
            Decided::Ready(result) => Answer::Ready(result.map(|decision| *slot = Some(decision))),
            Decided::Pending(future) => Answer::Pending(Box::pin(async move {
                *slot = Some(future.await?);
                Ok::<(), HookError>(())
            })),
        });
        match started {
            Started::Done(outcome) => outcome?,
            Started::Pending(future) => InFlight::new(future, timeout, None, &mut HookClock::default(), 0).await?,
        }
    }
    // A hook that answered `Ok` stored its decision before answering.
    Ok(answer.unwrap_or(ToolDecision::Allow))
}

/// Logs a governing hook's failure with the `[Hooks] ✗` prefix and what its `on_failure` made
/// of it (G6), never the call's arguments.
#[cold]
pub(crate) fn log_failure(id: &str, source: &str, failure: &HookFailure, on_failure: hooks_core::OnFailure) {
    let consequence = match on_failure {
        hooks_core::OnFailure::Deny => "on_failure = deny: the tool call is denied",
        hooks_core::OnFailure::Allow => "on_failure = allow: the tool call goes on",
        _ => "",
    };
    tracing::error!(
        target: invoke::TARGET,
        hook_id = id,
        hook_kind = "before_tool_call",
        on_failure = on_failure.as_str(),
        "[Hooks] ✗ Error running before_tool_call hook `{id}` ({source}): {}; {consequence}",
        failure.describe()
    );
}
