//! One function per hook point. Each encodes its kind's error rule (CONFORMANCE E, M, R, T) and
//! nothing else; the pipelines in `thread` call them.

use hooks_core::__private::{Adapter, HookHandler, ResolvedHook, sync_adapter};
use hooks_core::{
    HookError, HookExecutionContext, HookMessage, HookResult, HookToolCall, HookToolResult, LlmMessage, MessageRecord,
    MessageUpdate, ThreadState, ToolCallRecord,
};

use std::future::Future;

use super::chain::{Dispatch, FailureRule, PointRun};
use super::invoke::{self, Answer, HookFailure, Started, spans_wanted};
use super::panics;
use super::plain::{Plain, PlainChain};

/// A kind whose chain transforms one value in place.
trait TransformKind: 'static {
    /// The value the chain transforms.
    type Value: Clone + Send;
    /// What the hooks get besides the state and the value (`()` for most kinds).
    type Arg: ?Sized + Sync;
    /// The kind's sync adapter.
    type Sync: Copy;
    /// The typed chain of plain sync hooks, when `chain` is this kind's.
    fn plain(chain: &PlainChain) -> Option<&[Plain<Self::Sync>]>;
    /// A sync adapter's call: its outcome, in a register.
    fn call_plain<'v>(
        call: Self::Sync,
        state: &'v ThreadState,
        arg: &'v Self::Arg,
        value: &'v mut Self::Value,
        ctx: &'v HookExecutionContext,
    ) -> HookResult<()>;
    /// The sync adapter of a hook known to be sync.
    fn sync_of(handler: &HookHandler) -> Self::Sync;
    /// Any hook's call.
    fn call<'v>(
        handler: &HookHandler,
        state: &'v ThreadState,
        arg: &'v Self::Arg,
        value: &'v mut Self::Value,
        ctx: &'v HookExecutionContext,
    ) -> Answer<'v>;
}

macro_rules! transform_kind {
    ($marker:ident [$first:ident $(| $variant:ident)*], $value:ty, $arg:ty, |$state:ident, $a:ident, $v:ident, $ctx:ident| ($($call:expr),*)) => {
        struct $marker;
        impl TransformKind for $marker {
            type Value = $value;
            type Arg = $arg;
            #[inline(always)]
            fn plain(chain: &PlainChain) -> Option<&[Plain<Self::Sync>]> {
                match chain {
                    PlainChain::$first(plain) $(| PlainChain::$variant(plain))* => Some(plain),
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
            adapter_calls!('v, [$first $(| $variant)*], (
                $state: &'v ThreadState,
                $a: &'v Self::Arg,
                $v: &'v mut Self::Value,
                $ctx: &'v HookExecutionContext
            ) => ($($call),*));
        }
    };
}

transform_kind!(FilterMessages[FilterMessages], Vec<HookMessage>, (), |state, _a, v, ctx| (state, v, ctx));
transform_kind!(PrefilterLlmHistory[PrefilterLlmHistory], Vec<LlmMessage>, (), |state, _a, v, ctx| (state, v, ctx));
transform_kind!(BeforeCreateMessage[BeforeCreateMessage], MessageRecord, (), |state, _a, v, ctx| (state, v, ctx));
transform_kind!(BeforeUpdateMessage[BeforeUpdateMessage], MessageUpdate, str, |state, id, v, ctx| (state, id, v, ctx));
transform_kind!(BeforeStoreToolResult[BeforeStoreToolResult], HookToolResult, ToolCallRecord, |state, call, v, ctx| (
    state, call, v, ctx
));
transform_kind!(AfterSystemMessage[AfterSystemMessage], String, (), |state, _a, v, ctx| (state, v, ctx));
transform_kind!(
    AfterToolCall[AfterToolCallSuccess | AfterToolCallFailure],
    HookToolResult,
    HookToolCall,
    |state, call, v, ctx| (state, call, v, ctx)
);

/// What a transform chain runs with, the same from its first hook to its last: the chain, the
/// thread's state, the kind's argument and the failure rule. The value and its snapshot, which
/// the hooks change, go beside it.
struct Run<'a, K: TransformKind> {
    dispatch: Dispatch<'a>,
    state: &'a ThreadState,
    arg: &'a K::Arg,
    rule: FailureRule,
}

/// Runs a transform chain on `value` under `rule`.
///
/// With [`FailureRule::Prevent`] the first failure returns its error, and the value is discarded
/// by the caller, so nothing is ever snapshotted. Otherwise a failing hook leaves the chain going
/// on with the last good value (E1, E7): an in-place hook's value is as the hook left it (no
/// copy); before a hook that moves the value (a by-value hook, which leaves nothing behind when it
/// fails, times out or panics) a snapshot is taken into one buffer per chain, reused from hook to
/// hook with `clone_from` so that after the first it allocates nothing, and restored on failure.
///
/// The sync hooks up to the first async one run when this is called, in [`run_sync`], a plain
/// function whose loop state lives in registers: a chain of sync hooks builds no state machine
/// and moves nothing; the point answers [`PointRun::Finished`]. Only from an async hook on (or
/// when hook spans are wanted) does the chain go on in [`resume`], the future answered in
/// [`PointRun::Suspended`], which the caller awaits in place (no box: a chain's only allocations
/// are its async hooks' own futures).
#[inline(always)]
fn run_transform<'a, K: TransformKind, M: Finish>(
    dispatch: Dispatch<'a>,
    state: &'a ThreadState,
    arg: &'a K::Arg,
    value: &'a mut K::Value,
    rule: FailureRule,
) -> PointRun<impl Future<Output = M::Output> + Send + 'a> {
    if dispatch.is_empty() {
        return PointRun::Finished(M::finish(Ok(())));
    }
    let run = Run::<K> { dispatch, state, arg, rule };
    let traced = spans_wanted();
    if !traced && let Some(plain) = dispatch.plain.and_then(K::plain) {
        return PointRun::Finished(M::finish(run_plain(&run, plain, value)));
    }
    let mut snapshot: Snapshot<K::Value> = None;
    let resume_at = if traced {
        Resume::Traced
    } else {
        match run_sync(&run, value, 0, &mut snapshot) {
            Segment::Done(result) => return PointRun::Finished(M::finish(result)),
            Segment::Async(position) => Resume::Async(position),
        }
    };
    PointRun::Suspended(resume::<K, M>(run, value, resume_at, snapshot))
}

/// Runs a chain of plain sync hooks, typed: one indirect call per hook under `catch_unwind`, the
/// thread marked as running hook code once for them all, and a test of the answer.
#[inline(always)]
fn run_plain<K: TransformKind>(
    run: &Run<'_, K>,
    plain: &[Plain<K::Sync>],
    value: &mut K::Value,
) -> Result<(), HookError> {
    let in_hook = panics::enter();
    for hook in plain {
        let failure = match panics::catch_entered(&in_hook, || {
            K::call_plain(hook.call, run.state, run.arg, value, &hook.context)
        }) {
            Ok(Ok(())) => continue,
            Ok(Err(error)) => HookFailure::Error(error),
            Err(location) => HookFailure::Panic(location),
        };
        plain_failed(&run.dispatch, plain, hook, failure, run.rule, value)?;
    }
    Ok(())
}

/// A plain hook failed: settled as its chain's entry (the entry at its position).
#[cold]
#[inline(never)]
fn plain_failed<S, V: Clone>(
    dispatch: &Dispatch<'_>,
    plain: &[Plain<S>],
    hook: &Plain<S>,
    failure: HookFailure,
    rule: FailureRule,
    value: &mut V,
) -> Result<(), HookError> {
    let position = (std::ptr::from_ref(hook).addr() - plain.as_ptr().addr()) / size_of::<Plain<S>>();
    settle(&dispatch.chain[position], failure, rule, value, None)
}

/// How a hook point answers its chain's outcome.
trait Finish: 'static {
    type Output;
    fn finish(outcome: Result<(), HookError>) -> Self::Output;
}

/// Nothing: the failures were logged and the last good value kept.
struct KeepValue;

impl Finish for KeepValue {
    type Output = ();
    #[inline(always)]
    fn finish(_: Result<(), HookError>) {}
}

/// The failure that stops the caller's step, if any.
struct ValueOrError;

impl Finish for ValueOrError {
    type Output = Result<(), HookError>;
    #[inline(always)]
    fn finish(outcome: Result<(), HookError>) -> Result<(), HookError> {
        outcome
    }
}

/// Where [`resume`] picks a chain up.
enum Resume {
    /// At this async hook; every hook before it has run.
    Async(usize),
    /// From the start, each hook in its span: someone listens for hook spans.
    Traced,
}

/// The rest of a transform chain, from an async hook on: the async hook is awaited (under its
/// timeout, E3, E6), and the sync hooks after it run in [`run_sync`] again.
async fn resume<K: TransformKind, M: Finish>(
    run: Run<'_, K>,
    value: &mut K::Value,
    resume_at: Resume,
    mut snapshot: Snapshot<K::Value>,
) -> M::Output {
    let mut position = match resume_at {
        Resume::Async(position) => position,
        Resume::Traced => {
            // Boxed: the traced chain's state (a span per hook) stays out of the untraced future.
            let traced = Box::pin(run_traced(&run, value, &mut snapshot));
            return M::finish(traced.await);
        }
    };
    let mut clock = invoke::HookClock::default();
    loop {
        let entry = &run.dispatch.chain[position];
        let restore = take_snapshot(entry, run.rule, value, &mut snapshot);
        let timeout = run.dispatch.timeout_of(entry);
        let slot = &mut *value;
        let call = move || {
            // Moving the borrow out makes the closure `FnOnce`: the hook's future holds it.
            let slot = slot;
            K::call(entry.handler(), run.state, run.arg, slot, &entry.context)
        };
        let outcome = match invoke::start(entry, timeout, call) {
            Started::Done(outcome) => outcome,
            Started::Pending(future) => invoke::InFlight::new(future, timeout, None, &mut clock, position).await,
        };
        if let Err(failure) = outcome
            && let Err(error) = settle(entry, failure, run.rule, value, restore.then_some(&snapshot))
        {
            return M::finish(Err(error));
        }
        // An async hook right after needs no trip through `run_sync`.
        position += 1;
        match run.dispatch.chain.get(position) {
            None => return M::finish(Ok(())),
            Some(next) if next.handler().is_async() && next.optional_slot.is_none() => continue,
            Some(_) => {}
        }
        position = match run_sync_outlined(&run, value, position, &mut snapshot) {
            Segment::Done(result) => return M::finish(result),
            Segment::Async(next) => next,
        };
    }
}

/// The value before a by-value hook, to restore if that hook fails; one buffer per chain, boxed
/// so that a chain's future carries a pointer for it, not a value that only by-value hooks use.
type Snapshot<V> = Option<Box<V>>;

/// How far [`run_sync`] got.
enum Segment {
    /// The chain ended (or a failure stopped it).
    Done(Result<(), HookError>),
    /// The hook at this position is async: the caller awaits it, then goes on after it.
    Async(usize),
}

/// Runs the chain's sync hooks from `from` on, up to the end or the next async hook. A sync hook
/// is a plain call under `catch_unwind`, the thread marked as running hook code once for them all.
/// A plain sync hook (the entry's flag, computed at resolution), the common case, costs one test
/// before its call, which answers in a register; anything else (an optional relationship's hook,
/// an async, blocking or by-value one) takes [`prepare`].
/// Inlined into [`run_transform`], a plain function; [`resume`] calls it through
/// [`run_sync_outlined`], so that its loop state never lives in that future.
#[inline(always)]
fn run_sync<K: TransformKind>(
    run: &Run<'_, K>,
    value: &mut K::Value,
    from: usize,
    snapshot: &mut Snapshot<K::Value>,
) -> Segment {
    let in_hook = panics::enter();
    let chain = run.dispatch.chain.get(from..).unwrap_or_default();
    for (offset, entry) in chain.iter().enumerate() {
        let mut restore = false;
        if !entry.is_plain() {
            match prepare(run, entry, value, snapshot) {
                Prepared::Skip => continue,
                Prepared::Async => return Segment::Async(from + offset),
                Prepared::Called(Ok(())) => continue,
                Prepared::Called(Err(error)) => return Segment::Done(Err(error)),
                Prepared::Call { restored } => restore = restored,
            }
        }
        let failure = match panics::catch_entered(&in_hook, || {
            K::call_plain(K::sync_of(entry.handler()), run.state, run.arg, value, &entry.context)
        }) {
            Ok(Ok(())) => continue,
            Ok(Err(error)) => HookFailure::Error(error),
            Err(location) => HookFailure::Panic(location),
        };
        if let Err(error) = settle(entry, failure, run.rule, value, restore.then_some(snapshot)) {
            return Segment::Done(Err(error));
        }
    }
    Segment::Done(Ok(()))
}

/// What to do with a hook that is not a plain sync hook.
enum Prepared {
    /// An optional relationship's hook whose relationship is not enabled on this thread.
    Skip,
    /// An async hook: the chain goes on in [`resume`].
    Async,
    /// Call it (sync); `restored`: a snapshot was taken before it, to restore if it fails.
    Call { restored: bool },
    /// A `blocking` hook, called and settled: the chain goes on, or stops with the error.
    Called(Result<(), HookError>),
}

#[cold]
#[inline(never)]
fn prepare<K: TransformKind>(
    run: &Run<'_, K>,
    entry: &ResolvedHook,
    value: &mut K::Value,
    snapshot: &mut Snapshot<K::Value>,
) -> Prepared {
    if !entry.is_active(&run.dispatch.enabled) {
        return Prepared::Skip;
    }
    if entry.handler().is_async() {
        return Prepared::Async;
    }
    let restored = take_snapshot(entry, run.rule, value, snapshot);
    if !entry.hook.blocking {
        return Prepared::Call { restored };
    }
    let called = match blocking_call(run, entry, value) {
        Ok(()) => Ok(()),
        Err(failure) => settle(entry, failure, run.rule, value, restored.then_some(snapshot)),
    };
    Prepared::Called(called)
}

/// [`run_sync`] as a function of its own, for [`resume`].
#[inline(never)]
fn run_sync_outlined<K: TransformKind>(
    run: &Run<'_, K>,
    value: &mut K::Value,
    from: usize,
    snapshot: &mut Snapshot<K::Value>,
) -> Segment {
    run_sync(run, value, from, snapshot)
}

/// A sync hook marked `blocking`, called as [`invoke::start`] does it.
fn blocking_call<K: TransformKind>(
    run: &Run<'_, K>,
    entry: &ResolvedHook,
    value: &mut K::Value,
) -> Result<(), HookFailure> {
    let call = || Answer::Ready(K::call_plain(K::sync_of(entry.handler()), run.state, run.arg, value, &entry.context));
    match invoke::start(entry, run.dispatch.timeout_of(entry), call) {
        Started::Done(outcome) => outcome,
        Started::Pending(_) => unreachable!("a sync adapter answered a future"),
    }
}

/// Before a hook that moves the value, when failures keep the last good value: the value goes
/// into the chain's snapshot buffer. Answers whether it did.
#[inline(always)]
fn take_snapshot<V: Clone>(entry: &ResolvedHook, rule: FailureRule, value: &V, snapshot: &mut Snapshot<V>) -> bool {
    let restore = rule != FailureRule::Prevent && entry.hook.moves_value;
    if restore {
        match snapshot {
            Some(saved) => (**saved).clone_from(value),
            None => *snapshot = Some(Box::new(value.clone())),
        }
    }
    restore
}

/// A hook failed: it is logged, and by `rule` either the chain stops with its error, or the value
/// goes back to the snapshot taken before the hook (when it moved the value) and the chain goes on.
#[cold]
#[inline(never)]
fn settle<V: Clone>(
    entry: &ResolvedHook,
    failure: HookFailure,
    rule: FailureRule,
    value: &mut V,
    snapshot: Option<&Snapshot<V>>,
) -> Result<(), HookError> {
    invoke::log_failure(entry, &failure);
    if rule == FailureRule::Prevent || (rule == FailureRule::BlockOrKeepLastGood && failure.is_block()) {
        return Err(failure.into_error(entry));
    }
    if let Some(Some(saved)) = snapshot {
        value.clone_from(saved);
    }
    Ok(())
}

/// A transform chain when someone listens for hook spans: each hook in its span.
#[cold]
async fn run_traced<K: TransformKind>(
    run: &Run<'_, K>,
    value: &mut K::Value,
    snapshot: &mut Snapshot<K::Value>,
) -> Result<(), HookError> {
    for entry in run.dispatch.chain {
        if !entry.is_active(&run.dispatch.enabled) {
            continue;
        }
        let restore = take_snapshot(entry, run.rule, value, snapshot);
        let timeout = run.dispatch.timeout_of(entry);
        let slot = &mut *value;
        let call = move || {
            let slot = slot;
            K::call(entry.handler(), run.state, run.arg, slot, &entry.context)
        };
        if let Err(failure) = invoke::run_traced(entry, timeout, call).await {
            settle(entry, failure, run.rule, value, restore.then_some(&*snapshot))?;
        }
    }
    Ok(())
}

/// R3-R4: `filter_messages`; failures keep the last good value (E1, E7).
#[inline]
pub(crate) fn filter_messages<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    messages: &'a mut Vec<HookMessage>,
) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
    run_transform::<FilterMessages, KeepValue>(*dispatch, state, &(), messages, FailureRule::KeepLastGood)
}

/// R5, R7: `prefilter_llm_history`; a `block: true` error stops the step, others keep the last
/// good value.
#[inline]
pub(crate) fn prefilter_llm_history<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    messages: &'a mut Vec<LlmMessage>,
) -> PointRun<impl Future<Output = Result<(), HookError>> + Send + use<'a>> {
    run_transform::<PrefilterLlmHistory, ValueOrError>(
        *dispatch,
        state,
        &(),
        messages,
        FailureRule::BlockOrKeepLastGood,
    )
}

/// M1, M2, M9: `before_create_message` under the write's rule.
#[inline]
pub(crate) fn before_create_message<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    record: &'a mut MessageRecord,
    rule: FailureRule,
) -> PointRun<impl Future<Output = Result<(), HookError>> + Send + use<'a>> {
    run_transform::<BeforeCreateMessage, ValueOrError>(*dispatch, state, &(), record, rule)
}

/// M4: `before_update_message`; the first failure prevents the update.
#[inline]
pub(crate) fn before_update_message<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    message_id: &'a str,
    update: &'a mut MessageUpdate,
) -> PointRun<impl Future<Output = Result<(), HookError>> + Send + use<'a>> {
    run_transform::<BeforeUpdateMessage, ValueOrError>(*dispatch, state, message_id, update, FailureRule::Prevent)
}

/// T6: `before_store_tool_result`; the tool result is stored whatever happens, with the last
/// good value (M9).
#[inline]
pub(crate) fn before_store_tool_result<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    call: &'a ToolCallRecord,
    result: &'a mut HookToolResult,
) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
    run_transform::<BeforeStoreToolResult, KeepValue>(*dispatch, state, call, result, FailureRule::KeepLastGood)
}

/// R1: `after_system_message`; a by-value hook's `None` keeps the message and a string replaces
/// it; a failure keeps the last good value.
#[inline]
pub(crate) fn after_system_message<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    system: &'a mut String,
) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
    run_transform::<AfterSystemMessage, KeepValue>(*dispatch, state, &(), system, FailureRule::KeepLastGood)
}

/// T5: `after_tool_call_success` or `_failure` (by the result's status); a by-value hook's `None`
/// keeps the result and a returned result replaces it; a failure keeps the last good value.
#[inline]
pub(crate) fn after_tool_call<'a>(
    dispatch: &Dispatch<'a>,
    state: &'a ThreadState,
    call: &'a HookToolCall,
    result: &'a mut HookToolResult,
) -> PointRun<impl Future<Output = ()> + Send + use<'a>> {
    run_transform::<AfterToolCall, KeepValue>(*dispatch, state, call, result, FailureRule::KeepLastGood)
}

#[cfg(test)]
mod tests {
    use hooks_core::__private::transforms_in_place;
    use hooks_core::HookKind;

    use super::*;

    /// Every kind that transforms in place has a hook point here whose marker reads its plain
    /// chain: one missing would leave the kind's plain chains built and never run.
    #[test]
    fn every_kind_that_transforms_in_place_has_a_transform_marker() {
        for &kind in HookKind::ALL.iter().filter(|&&kind| transforms_in_place(kind)) {
            let chain = PlainChain::empty(kind).unwrap_or_else(|| panic!("`{kind}` has no plain chain"));
            let read = [
                FilterMessages::plain(&chain).is_some(),
                PrefilterLlmHistory::plain(&chain).is_some(),
                BeforeCreateMessage::plain(&chain).is_some(),
                BeforeUpdateMessage::plain(&chain).is_some(),
                BeforeStoreToolResult::plain(&chain).is_some(),
                AfterSystemMessage::plain(&chain).is_some(),
                AfterToolCall::plain(&chain).is_some(),
            ];
            assert_eq!(read.iter().filter(|&&read| read).count(), 1, "`{kind}` is read by one marker, not {read:?}");
        }
    }
}
