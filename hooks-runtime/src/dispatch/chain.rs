//! A chain ready to run ([`Dispatch`]), a hook point's answer ([`PointRun`], awaited in place
//! with `await_point!`), and what a failure does to the value a chain carries ([`FailureRule`]).

use std::future::Future;
use std::time::Duration;

use hooks_core::__private::{EnabledRelationships, ResolvedHook};

use super::PlainChain;

/// One chain ready to run: its entries, its typed form when every hook of it is a plain sync
/// hook, the enabled optional relationships, the default timeout.
#[derive(Clone, Copy)]
pub(crate) struct Dispatch<'c> {
    pub(crate) chain: &'c [ResolvedHook],
    pub(crate) plain: Option<&'c PlainChain>,
    pub(crate) enabled: EnabledRelationships,
    pub(crate) default_timeout: Duration,
}

impl Dispatch<'_> {
    /// Whether the chain has no hook; call sites check it before building anything, so an empty
    /// chain costs a length check.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.chain.is_empty()
    }

    /// The timeout of one entry: its own `timeout_ms`, else the runtime's default.
    #[inline]
    pub(crate) fn timeout_of(&self, entry: &ResolvedHook) -> Duration {
        entry.hook.timeout_ms.map_or(self.default_timeout, Duration::from_millis)
    }
}

/// A hook point, called: the sync hooks of its chain have run, up to its end or its first async
/// hook.
///
/// `Finished` holds the point's outcome; `Suspended` is the rest of the chain, a future that the
/// caller awaits where it called the point ([`await_point!`]), so that it lives in the caller's
/// own state and needs no allocation. A chain of sync hooks thus builds no future and moves
/// nothing: its value is changed in place, behind the `&mut` the point was given.
#[must_use = "a suspended hook point runs the rest of its chain only when awaited"]
pub(crate) enum PointRun<F: Future> {
    /// The chain ran to its end (or a failure stopped it): the point's outcome.
    Finished(F::Output),
    /// The chain reached an async hook (or spans are wanted): the rest of it.
    Suspended(F),
}

/// Awaits a hook point where it is called: `await_point!(dispatch::filter_messages(..))` is the
/// point's outcome. In an `async` context only.
macro_rules! await_point {
    ($point:expr) => {
        match $point {
            $crate::dispatch::PointRun::Finished(outcome) => outcome,
            $crate::dispatch::PointRun::Suspended(rest) => rest.await,
        }
    };
}
pub(crate) use await_point;

/// [`await_point!`] for a point whose chain rarely suspends, in a future that many others
/// nest (a message's creation, in every step and tool call): the rest of the chain, when there
/// is one, is awaited boxed, so that the caller's future does not carry room for it. The point
/// is called in a statement of its own, so its outcome is all that lives across the `await`.
macro_rules! await_point_boxed {
    ($point:expr) => {{
        let point = match $point {
            $crate::dispatch::PointRun::Finished(outcome) => ::std::result::Result::Ok(outcome),
            $crate::dispatch::PointRun::Suspended(rest) => ::std::result::Result::Err(::std::boxed::Box::pin(rest)),
        };
        match point {
            ::std::result::Result::Ok(outcome) => outcome,
            ::std::result::Result::Err(rest) => rest.await,
        }
    }};
}
pub(crate) use await_point_boxed;

/// What a failing hook does to the value its chain carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureRule {
    /// E1, M9: log and go on with the last good value.
    KeepLastGood,
    /// M2, M4: the first failure prevents the write; the remaining hooks do not run.
    Prevent,
    /// R7: a `block: true` error stops the step; any other failure keeps the last good value.
    BlockOrKeepLastGood,
}
