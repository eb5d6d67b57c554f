//! Running one hook: a span, panics caught, a timeout for an async hook, failures logged with
//! the `[Hooks] ✗` prefix naming the hook and kind but never the data it was given (E3-E5).
//!
//! A sync hook is started and finished by [`HookRun::start`], a plain function: no future is
//! created for it. Only an async hook's boxed future reaches [`HookRun::finish`].

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hooks_core::{BoxedHookFuture, HookError, HookFuture, HookResult, HookSource, ResolvedHook};
use tracing::Span;

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

    /// Whether it is an error with `block: true`.
    pub(crate) fn is_block(&self) -> bool {
        matches!(self, HookFailure::Error(error) if error.is_block())
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

/// How far a hook got when it was started.
pub(crate) enum Started<'a, T> {
    /// A sync hook's result, or a panic of either kind while it was called.
    Done(Result<T, HookFailure>),
    /// An async hook's future, to be driven by [`HookRun::finish`].
    Pending(BoxedHookFuture<'a, HookResult<T>>),
}

/// One hook run: its span (id, kind, source, duration) and its failure log.
pub(crate) struct HookRun<'e> {
    entry: &'e ResolvedHook,
    span: Span,
    started_at: Option<Instant>,
}

impl<'e> HookRun<'e> {
    #[inline]
    pub(crate) fn new(entry: &'e ResolvedHook) -> Self {
        let def = entry.hook;
        let span = tracing::info_span!(
            target: "hooks_runtime::hook",
            "hook",
            hook.id = def.id,
            hook.kind = def.kind().name(),
            hook.source = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        // Reading the clock and naming the source only when someone listens.
        let started_at = (!span.is_disabled()).then(|| {
            span.record("hook.source", source_label(entry));
            Instant::now()
        });
        HookRun { entry, span, started_at }
    }

    /// Calls the adapter with panics caught.
    #[inline]
    pub(crate) fn start<'a, T>(&self, call: impl FnOnce() -> HookFuture<'a, HookResult<T>>) -> Started<'a, T> {
        let outcome = self.span.in_scope(|| catch_unwind(AssertUnwindSafe(call)));
        match outcome {
            Err(payload) => Started::Done(Err(panicked(payload))),
            Ok(HookFuture::Ready(result)) => Started::Done(result.map_err(HookFailure::Error)),
            Ok(HookFuture::Pending(future)) => Started::Pending(future),
        }
    }

    /// Drives an async hook's future, panics caught. It is polled once before the timer is
    /// armed: a future that is ready at once cannot have timed out, and needs no clock reading.
    /// When it is not ready, the timer is armed and the task yields; the hook is polled again
    /// only when it is woken, never twice in one poll (a hook that yields really yields).
    pub(crate) async fn finish<T>(
        &self,
        future: BoxedHookFuture<'_, HookResult<T>>,
        timeout: Duration,
    ) -> Result<T, HookFailure> {
        let mut guarded = CatchUnwind(future);
        let first = std::future::poll_fn(|cx| {
            let _entered = self.span.enter();
            Poll::Ready(match Pin::new(&mut guarded).poll(cx) {
                Poll::Ready(output) => Some(output),
                Poll::Pending => None,
            })
        })
        .await;
        let output = match first {
            Some(output) => output,
            None => {
                let deadline = tokio::time::sleep(timeout);
                let mut deadline = std::pin::pin!(deadline);
                // The hook was just polled: this round only arms the timer.
                let mut hook_polled = true;
                let outcome = std::future::poll_fn(|cx| {
                    if !std::mem::take(&mut hook_polled) {
                        let _entered = self.span.enter();
                        if let Poll::Ready(output) = Pin::new(&mut guarded).poll(cx) {
                            return Poll::Ready(Some(output));
                        }
                    }
                    match deadline.as_mut().poll(cx) {
                        Poll::Ready(()) => Poll::Ready(None),
                        Poll::Pending => Poll::Pending,
                    }
                })
                .await;
                match outcome {
                    Some(output) => output,
                    None => return Err(HookFailure::Timeout(timeout)),
                }
            }
        };
        match output {
            Err(payload) => Err(panicked(payload)),
            Ok(result) => result.map_err(HookFailure::Error),
        }
    }

    /// Records the duration and logs a failure.
    #[inline]
    pub(crate) fn end<T>(self, result: &Result<T, HookFailure>) {
        if let Some(started_at) = self.started_at {
            self.span.record("duration_us", started_at.elapsed().as_micros() as u64);
        }
        if let Err(failure) = result {
            log_failure(self.entry, failure);
        }
    }
}

/// E5: the id, kind and source only; never the value, and not the error's own text, which a
/// hook may have built from message contents.
#[cold]
fn log_failure(entry: &ResolvedHook, failure: &HookFailure) {
    let def = entry.hook;
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

fn panicked(payload: Box<dyn Any + Send>) -> HookFailure {
    drop(payload);
    HookFailure::Panic
}

/// Runs one hook to its outcome: started in place, awaited only when it is async.
macro_rules! run_hook {
    ($dispatch:expr, $entry:expr, $call:expr) => {{
        let entry = $entry;
        let run = $crate::dispatch::invoke::HookRun::new(entry);
        let outcome = match run.start($call) {
            $crate::dispatch::invoke::Started::Done(result) => result,
            $crate::dispatch::invoke::Started::Pending(future) => run.finish(future, $dispatch.timeout_of(entry)).await,
        };
        run.end(&outcome);
        outcome
    }};
}
pub(crate) use run_hook;

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
