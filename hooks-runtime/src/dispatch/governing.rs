//! One governing decision (G6): a `before_tool_call` hook or runtime-wide guard called with its
//! panics caught and under its timeout, through the same path as every other hook, its answer
//! handed back beside the `()` that path carries.

use std::time::Duration;

use hooks_core::{HookError, HookFuture, HookResult, ToolDecision};

use super::invoke::{self, HookClock, HookFailure, InFlight, Started};

/// Runs `call` as hook code: its decision, or why it has none.
pub(crate) async fn decide<'a>(
    blocking: bool,
    timeout: Duration,
    call: impl FnOnce() -> HookFuture<'a, HookResult<ToolDecision>>,
) -> Result<ToolDecision, HookFailure> {
    let mut answer: Option<ToolDecision> = None;
    {
        let slot = &mut answer;
        let started = invoke::start_with(blocking, timeout, move || match call() {
            HookFuture::Ready(result) => HookFuture::Ready(result.map(|decision| *slot = Some(decision))),
            HookFuture::Pending(future) => HookFuture::boxed(async move {
                *slot = Some(future.await?);
                Ok::<(), HookError>(())
            }),
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
