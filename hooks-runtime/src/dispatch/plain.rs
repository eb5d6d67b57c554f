//! Chains of plain sync hooks, typed per kind: when every hook of a transform chain is a plain
//! sync hook (not async, not `blocking`, not moving its value, of no optional relationship), the
//! chain is also kept as a slice of that kind's sync adapters, built once with the agent's table.
//! Dispatch then runs it as a loop of indirect calls with no test but the answer's: no flag, no
//! variant of `HookHandler` to check, the answer in a register.

use hooks_core::__private::{Adapter, HookHandler, ResolvedHook, sync_adapter};
use hooks_core::{HookExecutionContext, HookKind};

/// One plain sync hook: its adapter and the context it is called with.
pub(crate) struct Plain<S> {
    pub(crate) call: S,
    pub(crate) context: HookExecutionContext,
}

macro_rules! plain_chains {
    ($($variant:ident),* $(,)?) => {
        /// A transform chain of plain sync hooks, typed by its kind; entry `n` is the chain's
        /// hook `n`.
        pub(crate) enum PlainChain {
            $($variant(Box<[Plain<sync_adapter::$variant>]>),)*
        }

        impl PlainChain {
            /// The typed form of `chain`, of `kind`, when every hook of it is a plain sync hook.
            pub(crate) fn of(kind: HookKind, chain: &[ResolvedHook]) -> Option<PlainChain> {
                if chain.is_empty() || !chain.iter().all(ResolvedHook::is_plain) {
                    return None;
                }
                match kind {
                    $(HookKind::$variant => chain
                        .iter()
                        .map(|entry| match *entry.handler() {
                            HookHandler::$variant(Adapter::Sync(call)) => {
                                Some(Plain { call, context: entry.context.clone() })
                            }
                            _ => None,
                        })
                        .collect::<Option<Box<[_]>>>()
                        .map(PlainChain::$variant),)*
                    // A kind whose chain answers a decision or only observes has no plain form;
                    // `every_kind_that_transforms_in_place_has_a_plain_chain` checks that no
                    // kind that transforms in place ends up here.
                    _ => None,
                }
            }

            /// The kinds with a plain form, as this list names them.
            #[cfg(test)]
            const KINDS: &[HookKind] = &[$(HookKind::$variant),*];

            /// An empty plain chain of `kind`, for the tests of the hook points that read them.
            #[cfg(test)]
            pub(crate) fn empty(kind: HookKind) -> Option<PlainChain> {
                match kind {
                    $(HookKind::$variant => Some(PlainChain::$variant(Box::new([]))),)*
                    _ => None,
                }
            }
        }
    };
}

plain_chains!(
    AfterSystemMessage,
    FilterMessages,
    PrefilterLlmHistory,
    BeforeCreateMessage,
    BeforeUpdateMessage,
    BeforeStoreToolResult,
    AfterToolCallSuccess,
    AfterToolCallFailure,
);

/// An agent's plain chains, indexed as its resolved table: per active context and kind.
pub(crate) struct PlainTable(Box<[Option<PlainChain>]>);

impl PlainTable {
    /// The plain chains of `resolved`.
    pub(crate) fn of(resolved: &hooks_core::ResolvedAgent) -> Self {
        let chains = hooks_core::__private::ActiveContext::ALL
            .into_iter()
            .flat_map(|active| {
                HookKind::ALL
                    .iter()
                    .map(move |&kind| PlainChain::of(kind, hooks_core::__private::chain(resolved, active, kind)))
            })
            .collect();
        PlainTable(chains)
    }

    /// The plain chain of `kind` in `active`, if that chain is one.
    #[inline]
    pub(crate) fn get(&self, active: hooks_core::__private::ActiveContext, kind: HookKind) -> Option<&PlainChain> {
        self.0[active.slot() * HookKind::ALL.len() + kind.index()].as_ref()
    }
}

#[cfg(test)]
mod tests {
    use hooks_core::__private::transforms_in_place;
    use hooks_core::HookKind;

    use super::PlainChain;

    /// The kind table decides which kinds have a plain form: a kind added to it that transforms
    /// in place and is missing from `plain_chains!` would silently lose its fast path.
    #[test]
    fn every_kind_that_transforms_in_place_has_a_plain_chain() {
        for &kind in HookKind::ALL {
            assert_eq!(
                PlainChain::KINDS.contains(&kind),
                transforms_in_place(kind),
                "`{kind}`: `plain_chains!` must list exactly the kinds that transform in place"
            );
        }
    }
}
