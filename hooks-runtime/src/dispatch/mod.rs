//! Hook dispatch: a resolved chain run in order, each hook under its timeout with panics
//! caught, and each hook point's error rule in one place.
//!
//! Nothing here looks a hook up by name, takes a lock or clones a definition: a chain is a slice
//! of resolved entries, an entry's adapter is a fn pointer, and a sync hook answers without
//! allocating.

mod invoke;
mod kinds;

use std::time::Duration;

use hooks_core::{EnabledRelationships, ResolvedHook};

pub(crate) use kinds::{
    after_create_message, after_subagent_created, after_system_message, after_thread_created, after_tool_call,
    after_update_message, before_create_message, before_store_tool_result, before_update_message, filter_messages,
    prefilter_llm_history, tool_call_done, tool_call_started, user_event,
};

/// One chain ready to run: its entries, the enabled optional relationships, the default timeout.
#[derive(Clone, Copy)]
pub(crate) struct Dispatch<'c> {
    pub(crate) chain: &'c [ResolvedHook],
    pub(crate) enabled: EnabledRelationships,
    pub(crate) default_timeout: Duration,
}

impl<'c> Dispatch<'c> {
    /// The entries that run: every entry but those of disabled optional relationships.
    #[inline]
    pub(crate) fn active(&self) -> impl Iterator<Item = &'c ResolvedHook> + use<'c> {
        let enabled = self.enabled;
        self.chain.iter().filter(move |entry| entry.is_active(&enabled))
    }

    /// The timeout of one entry: its own `timeout_ms`, else the runtime's default.
    #[inline]
    pub(crate) fn timeout_of(&self, entry: &ResolvedHook) -> Duration {
        entry.hook.timeout_ms.map_or(self.default_timeout, Duration::from_millis)
    }
}

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
