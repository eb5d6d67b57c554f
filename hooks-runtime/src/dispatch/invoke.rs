//! Running one hook: panics caught, a timeout for an async hook, a span only when someone
//! listens, and failures logged with the `[Hooks] ✗` prefix naming the hook, its kind and the
//! hook's own error message, never the data it was given (E3-E6).
//!
//! A sync hook is started and finished by [`start`], a plain function: no future is created for
//! it. Only an async hook's boxed future becomes an [`InFlight`]. The chains' hot loops call a
//! plain sync hook's adapter themselves (`transforms.rs`, `observers.rs`); this is every other path.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::clock::Reading;

use hooks_core::__private::{BoxedHookFuture, ResolvedHook};
use hooks_core::{HookError, HookResult};

use super::panics::{self, PanicLocation};

/// The target of hook spans and `[Hooks] ✗` lines.
pub(crate) const TARGET: &str = "hooks_runtime::hook";

/// Why a hook did not finish well.
#[derive(Debug)]
pub(crate) enum HookFailure {
    /// It returned an error.
    Error(HookError),
    /// It panicked (E4).
    Panic(PanicLocation),
    /// It ran past its timeout (E3, E6).
    Timeout(Duration),
}

impl HookFailure {
    /// The failure as the error a caller gets back (for prevented writes).
    pub(crate) fn into_error(self, entry: &ResolvedHook) -> HookError {
        match self {
            HookFailure::Error(error) => error,
            other => HookError::new(format!("{} hook `{}` {}", entry.hook.kind(), entry.hook.id, other.describe())),
        }
    }

    /// Whether it is an error with `block: true`.
    pub(crate) fn is_block(&self) -> bool {
        matches!(self, HookFailure::Error(error) if error.is_block())
    }

    /// The failure in a word, for its span's `error.type`: `blocked`, `error`, `panic` or
    /// `timeout`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            HookFailure::Error(error) if error.is_block() => "blocked",
            HookFailure::Error(_) => "error",
            HookFailure::Panic(_) => "panic",
            HookFailure::Timeout(_) => "timeout",
        }
    }

    /// The failure for the log: the hook's own error message (the spec makes its author keep
    /// sensitive data out of it), a panic's location but never its payload, or the timeout.
    pub(crate) fn describe(&self) -> String {
        match self {
            HookFailure::Error(error) if error.is_block() => format!("blocked: {}", error.message()),
            HookFailure::Error(error) => error.message().to_owned(),
            HookFailure::Panic(location) => location.to_string(),
            HookFailure::Timeout(after) => format!("timed out after {} ms", after.as_millis()),
        }
    }
}

/// The provenance of an entry for logs and spans: `prompt:x`, `agent:x` or `child:x`.
pub(crate) fn source_label(entry: &ResolvedHook) -> String {
    entry.context.source.to_string()
}

/// Whether hook spans are wanted: asked once per chain, so a chain nobody traces builds no span.
#[inline]
pub(crate) fn spans_wanted() -> bool {
    tracing::span_enabled!(target: TARGET, tracing::Level::INFO)
}

/// What a hook's adapter answered: a sync hook's outcome, or an async hook's future.
pub(crate) enum Answer<'a> {
    /// The sync hook's outcome.
    Ready(HookResult<()>),
    /// The async hook's future.
    Pending(BoxedHookFuture<'a, HookResult<()>>),
}

/// How far a hook got when it was started.
pub(crate) enum Started<'a> {
    /// A sync hook's outcome, or a panic of either kind while it was called.
    Done(Result<(), HookFailure>),
    /// An async hook's future, to be driven by [`finish`].
    Pending(BoxedHookFuture<'a, HookResult<()>>),
}

/// Calls the adapter with panics caught. A `blocking` hook takes the slow path.
#[inline(always)]
pub(crate) fn start<'a>(entry: &ResolvedHook, timeout: Duration, call: impl FnOnce() -> Answer<'a>) -> Started<'a> {
    start_with(entry.hook.blocking, timeout, call)
}

/// [`start`] for a hook known by its `blocking` flag alone (a runtime-wide guard).
#[inline(always)]
pub(crate) fn start_with<'a>(blocking: bool, timeout: Duration, call: impl FnOnce() -> Answer<'a>) -> Started<'a> {
    if blocking {
        return start_blocking(timeout, call);
    }
    start_in_place(call)
}

#[inline(always)]
fn start_in_place<'a>(call: impl FnOnce() -> Answer<'a>) -> Started<'a> {
    match panics::catch(call) {
        Ok(Answer::Ready(result)) => Started::Done(result.map_err(HookFailure::Error)),
        Ok(Answer::Pending(future)) => Started::Pending(future),
        Err(location) => Started::Done(Err(HookFailure::Panic(location))),
    }
}

/// A `blocking` sync hook: on a multi-threaded tokio runtime the worker's other tasks move to
/// another thread first (`block_in_place`), so other threads keep running while the hook blocks
/// this one. A sync function cannot be interrupted, but one that runs past its timeout is a
/// timed-out hook all the same (E3, E6), whatever it answered.
#[cold]
fn start_blocking<'a>(timeout: Duration, call: impl FnOnce() -> Answer<'a>) -> Started<'a> {
    let started_at = Instant::now();
    let multi_threaded = tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    let started =
        if multi_threaded { tokio::task::block_in_place(|| start_in_place(call)) } else { start_in_place(call) };
    match started {
        Started::Done(_) if started_at.elapsed() > timeout => Started::Done(Err(HookFailure::Timeout(timeout))),
        other => other,
    }
}

/// An async hook's future in flight, driven with panics caught under its timeout; awaiting it
/// answers the hook's outcome.
///
/// It is polled once before the timer is armed: a future that is ready at once needs no timer.
/// When it is not ready, the timer is armed for the rest of the timeout and the task yields; the
/// hook is polled again only when it is woken, never twice in one poll. E6: an answer that comes
/// after the deadline is discarded, even from a hook that blocked its thread and never yielded.
/// The hook's future is dropped as soon as it answers or times out, and this is dropped when its
/// await ends, so nothing the hook borrowed is touched by it again once the chain goes on. The
/// timer is boxed, so that this stays small for the hooks that answer at once.
///
/// Written by hand rather than as an `async fn`: its one state is its fields, polled in one call,
/// with no generator and no `poll_fn` layers around the hook's own future.
pub(crate) struct InFlight<'f, 'c> {
    future: Option<BoxedHookFuture<'f, HookResult<()>>>,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    started_at: Reading,
    timeout: Duration,
    span: Option<&'c tracing::Span>,
    clock: &'c mut HookClock,
    position: usize,
}

impl<'f, 'c> InFlight<'f, 'c> {
    /// The hook at `position` of its chain, whose adapter answered `future`, started now.
    #[inline]
    pub(crate) fn new(
        future: BoxedHookFuture<'f, HookResult<()>>,
        timeout: Duration,
        span: Option<&'c tracing::Span>,
        clock: &'c mut HookClock,
        position: usize,
    ) -> Self {
        let started_at = clock.start(position, timeout);
        InFlight { future: Some(future), deadline: None, started_at, timeout, span, clock, position }
    }

    /// The hook's future polled as hook code: panics caught, inside its span when there is one.
    #[inline]
    fn poll_hook(&mut self, cx: &mut Context<'_>) -> Poll<Result<HookResult<()>, PanicLocation>> {
        let Some(future) = self.future.as_mut() else { unreachable!("a hook polled after it answered") };
        let _entered = self.span.map(tracing::Span::enter);
        match panics::catch(|| future.as_mut().poll(cx)) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(location) => Poll::Ready(Err(location)),
        }
    }

    /// The hook timed out: its future is dropped, and its clock reading is no start for the next.
    #[cold]
    fn time_out(&mut self) -> Poll<Result<(), HookFailure>> {
        self.future = None;
        self.clock.forget();
        Poll::Ready(Err(HookFailure::Timeout(self.timeout)))
    }

    /// The timer of a hook that did not answer at once, armed for the rest of its timeout.
    #[cold]
    fn arm(&self) -> Pin<Box<tokio::time::Sleep>> {
        let remaining = self.timeout.saturating_sub(self.started_at.until(self.started_at.again()));
        Box::pin(tokio::time::sleep(remaining))
    }
}

impl Future for InFlight<'_, '_> {
    type Output = Result<(), HookFailure>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let output = match this.poll_hook(cx) {
            Poll::Ready(output) => output,
            Poll::Pending => {
                let armed = match this.deadline.take() {
                    Some(deadline) => deadline,
                    None => this.arm(),
                };
                let deadline = this.deadline.insert(armed);
                return match deadline.as_mut().poll(cx) {
                    Poll::Ready(()) => this.time_out(),
                    Poll::Pending => Poll::Pending,
                };
            }
        };
        this.future = None;
        let ended_at = this.clock.end(this.position, this.started_at);
        if this.started_at.until(ended_at) > this.timeout {
            return this.time_out();
        }
        Poll::Ready(match output {
            Ok(result) => result.map_err(HookFailure::Error),
            Err(location) => Err(HookFailure::Panic(location)),
        })
    }
}

/// The clock readings E6 needs, one per async hook instead of two: the reading that ends an
/// async hook starts the next one, when the next hook of the chain is async, reads the same
/// clock ([`Reading`]) and nothing ran in between. A reading is tied to the position of the hook
/// it ended, so a sync hook in between (which may have taken long) needs no bookkeeping: the
/// position no longer follows.
#[derive(Default)]
pub(crate) struct HookClock {
    last_end: Option<(usize, Reading)>,
}

impl HookClock {
    /// The start of the async hook at `position` in its chain.
    #[inline]
    fn start(&mut self, position: usize, timeout: Duration) -> Reading {
        match self.last_end.take() {
            Some((ended, at)) if ended + 1 == position && at.suits(timeout) => at,
            _ => Reading::now(timeout),
        }
    }

    /// The end of the async hook at `position`, kept as the start of the next.
    #[inline]
    fn end(&mut self, position: usize, started_at: Reading) -> Reading {
        let now = started_at.again();
        self.last_end = Some((position, now));
        now
    }

    fn forget(&mut self) {
        self.last_end = None;
    }
}

/// Runs one hook inside its span (id, kind, source, duration): the path taken when someone
/// listens for hook spans.
#[cold]
pub(crate) async fn run_traced<'a>(
    entry: &ResolvedHook,
    timeout: Duration,
    call: impl FnOnce() -> Answer<'a>,
) -> Result<(), HookFailure> {
    let def = entry.hook;
    let span = tracing::info_span!(
        target: TARGET,
        "hook",
        otel.name = format!("hook {}", def.id),
        hook.id = def.id,
        hook.kind = def.kind().name(),
        hook.source = source_label(entry),
        duration_us = tracing::field::Empty,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
    );
    let started_at = Instant::now();
    let outcome = match span.in_scope(|| start(entry, timeout, call)) {
        Started::Done(result) => result,
        Started::Pending(future) => InFlight::new(future, timeout, Some(&span), &mut HookClock::default(), 0).await,
    };
    // Signed: OpenTelemetry integers are `i64` (an unsigned field is exported as text).
    span.record("duration_us", i64::try_from(started_at.elapsed().as_micros()).unwrap_or(i64::MAX));
    if let Err(failure) = &outcome {
        span.record("error.type", failure.kind());
        span.record("otel.status_code", "ERROR");
    }
    outcome
}

/// Logs a failed hook: id, kind, source and what went wrong, with the guide's prefix.
#[cold]
pub(crate) fn log_failure(entry: &ResolvedHook, failure: &HookFailure) {
    let def = entry.hook;
    tracing::error!(
        target: TARGET,
        hook_id = def.id,
        hook_kind = def.kind().name(),
        "[Hooks] ✗ Error running {} hook `{}` ({}): {}",
        def.kind(),
        def.id,
        source_label(entry),
        failure.describe()
    );
}
