//! Running one hook: a span, a timeout for an async hook, panics caught, failures logged with
//! the `[Hooks] ✗` prefix naming the hook and kind but never the data it was given (E3-E5).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hooks_core::{HookError, HookFuture, HookResult, HookSource, ResolvedHook};

/// Why a hook did not produce a value.
#[derive(Debug)]
pub(crate) enum HookFailure {
    /// It returned an error.
    Error(HookError),
    /// It panicked (E4).
    Panic,
    /// It ran past its timeout (E3).
    Timeout(Duration),
}

impl HookFailure {
    /// The failure as the error a caller gets back (for prevented writes).
    pub(crate) fn into_error(self, entry: &ResolvedHook) -> HookError {
        match self {
            HookFailure::Error(error) => error,
            HookFailure::Panic => HookError::new(format!("{} hook `{}` panicked", entry.hook.kind(), entry.hook.id)),
            HookFailure::Timeout(after) => HookError::new(format!(
                "{} hook `{}` timed out after {} ms",
                entry.hook.kind(),
                entry.hook.id,
                after.as_millis()
            )),
        }
    }

    fn describe(&self) -> String {
        match self {
            HookFailure::Error(error) if error.is_block() => "returned a blocking error".to_owned(),
            HookFailure::Error(_) => "returned an error".to_owned(),
            HookFailure::Panic => "panicked".to_owned(),
            HookFailure::Timeout(after) => format!("timed out after {} ms", after.as_millis()),
        }
    }
}

/// The provenance of an entry for logs and spans: `prompt:x`, `agent:x` or `child:x`.
pub(crate) fn source_label(entry: &ResolvedHook) -> String {
    match &entry.context.source {
        HookSource::Prompt { prompt_name } => format!("prompt:{prompt_name}"),
        HookSource::Agent { agent_name } => format!("agent:{agent_name}"),
        HookSource::Child { relationship_name, .. } => format!("child:{relationship_name}"),
    }
}

/// Runs one hook. `call` invokes the adapter; a sync hook's panic is caught around it, an async
/// hook's future runs under `timeout` with its panics caught too.
pub(crate) async fn invoke<'a, T>(
    entry: &ResolvedHook,
    timeout: Duration,
    call: impl FnOnce() -> HookFuture<'a, HookResult<T>>,
) -> Result<T, HookFailure> {
    let def = entry.hook;
    let span = tracing::info_span!(
        target: "hooks_runtime::hook",
        "hook",
        hook.id = def.id,
        hook.kind = def.kind().name(),
        hook.source = tracing::field::Empty,
        duration_us = tracing::field::Empty,
    );
    let started = (!span.is_disabled()).then(|| {
        span.record("hook.source", source_label(entry));
        Instant::now()
    });
    let outcome = {
        let _entered = span.enter();
        catch_unwind(AssertUnwindSafe(call))
    };
    let result = match outcome {
        Err(payload) => Err(panicked(payload)),
        Ok(HookFuture::Ready(result)) => result.map_err(HookFailure::Error),
        Ok(HookFuture::Pending(future)) => {
            let guarded = CatchUnwind(future);
            match tokio::time::timeout(timeout, tracing::Instrument::instrument(guarded, span.clone())).await {
                Err(_) => Err(HookFailure::Timeout(timeout)),
                Ok(Err(payload)) => Err(panicked(payload)),
                Ok(Ok(result)) => result.map_err(HookFailure::Error),
            }
        }
    };
    if let Some(started) = started {
        span.record("duration_us", started.elapsed().as_micros() as u64);
    }
    if let Err(failure) = &result {
        // E5: the id, kind and source only; never the value, and not the error's own text,
        // which a hook may have built from message contents.
        tracing::error!(
            target: "hooks_runtime::hook",
            hook_id = def.id,
            hook_kind = def.kind().name(),
            "[Hooks] ✗ {} hook `{}` ({}) {}",
            def.kind(),
            def.id,
            source_label(entry),
            failure.describe()
        );
    }
    result
}

fn panicked(payload: Box<dyn Any + Send>) -> HookFailure {
    drop(payload);
    HookFailure::Panic
}

/// Polls a boxed hook future with panics caught, so a panicking async hook is that hook's
/// failure and not the thread's.
struct CatchUnwind<'a, T>(Pin<Box<dyn Future<Output = T> + Send + 'a>>);

impl<T> Future for CatchUnwind<'_, T> {
    type Output = Result<T, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}
