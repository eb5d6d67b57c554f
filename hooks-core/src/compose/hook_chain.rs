//! A read-only view of one resolved chain ([`HookChain`], [`ChainedHook`]): which hooks run at a
//! hook point, in order, with their provenance, for tests and catalogs. The chain's entries
//! themselves (adapters, flags) stay internal.

use std::fmt;

use super::agent::ParentHookRequirement;
use super::resolve::{ActiveContext, ResolvedAgent, ResolvedHook};
use crate::def::HookDef;
use crate::kind::HookKind;
use crate::types::{HookExecutionContext, HookSource};

impl ResolvedAgent {
    /// The hooks that run at `kind` in `active`, in the order they run (S1): children's
    /// `before_parent` hooks, the active prompt's (or the agent's), children's `after_parent`
    /// hooks. Hooks of optional relationships are included whether or not a thread enables them
    /// ([`ChainedHook::optional_relationship`] names theirs).
    ///
    /// ```
    /// use hooks_runtime::prelude::*;
    /// use hooks_runtime::resolution::ActiveContext;
    /// use hooks_runtime::types::Side;
    ///
    /// #[hook(filter_messages, id = "keep_recent_chain")]
    /// fn keep_recent(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
    ///     keep_last_messages(messages, 20);
    /// }
    ///
    /// define_prompt! { name: chain_prompt, model: "scripted", prompt: "Help.", hooks: [keep_recent_chain] }
    /// define_agent! { name: chain_agent, side_a: { prompt: chain_prompt } }
    ///
    /// let resolved = ResolvedAgent::resolve(<chain_agent as Agent>::DEF, &Registry::linked()).unwrap();
    /// let chain = resolved.hook_chain(ActiveContext::Side(Side::A), HookKind::FilterMessages);
    /// assert_eq!(chain.ids(), ["keep_recent_chain"]);
    /// let hook = chain.iter().next().unwrap();
    /// assert_eq!(hook.kind(), HookKind::FilterMessages);
    /// assert_eq!(hook.source(), &HookSource::Prompt { prompt_name: "chain_prompt".into() });
    /// assert!(resolved.hook_chain(ActiveContext::AtRest, HookKind::FilterMessages).is_empty());
    /// ```
    pub fn hook_chain(&self, active: ActiveContext, kind: HookKind) -> HookChain<'_> {
        HookChain { agent: self, entries: self.chain(active, kind) }
    }
}

/// The hooks of one hook point of a [`ResolvedAgent`], in order: from
/// [`ResolvedAgent::hook_chain`]. Its `Debug` lists each hook's id and provenance.
#[derive(Clone, Copy)]
pub struct HookChain<'a> {
    agent: &'a ResolvedAgent,
    entries: &'a [ResolvedHook],
}

impl<'a> HookChain<'a> {
    /// How many hooks the chain has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no hook runs at this point.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The hook at `index` (0 is the first to run), if the chain is that long.
    pub fn get(&self, index: usize) -> Option<ChainedHook<'a>> {
        self.entries.get(index).map(|entry| ChainedHook { agent: self.agent, entry })
    }

    /// The hooks, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ChainedHook<'a>> + 'a {
        let agent = self.agent;
        self.entries.iter().map(move |entry| ChainedHook { agent, entry })
    }

    /// The hooks' ids, in order.
    pub fn ids(&self) -> Vec<&'static str> {
        self.entries.iter().map(|entry| entry.hook.id).collect()
    }
}

impl<'a> IntoIterator for HookChain<'a> {
    type Item = ChainedHook<'a>;
    type IntoIter = Box<dyn ExactSizeIterator<Item = ChainedHook<'a>> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl fmt::Debug for HookChain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One hook of a [`HookChain`]: its definition, the provenance it runs with (C3), and for a
/// child's hook the requirement that brought it.
#[derive(Clone, Copy)]
pub struct ChainedHook<'a> {
    agent: &'a ResolvedAgent,
    entry: &'a ResolvedHook,
}

impl<'a> ChainedHook<'a> {
    /// The hook's id.
    pub fn id(&self) -> &'static str {
        self.entry.hook.id
    }

    /// The hook's kind.
    pub fn kind(&self) -> HookKind {
        self.entry.hook.kind()
    }

    /// The hook's definition (its location: package, module, file, line).
    pub fn def(&self) -> &'static HookDef {
        self.entry.hook
    }

    /// The context the hook receives as its last argument.
    pub fn context(&self) -> &'a HookExecutionContext {
        &self.entry.context
    }

    /// Why the hook runs here: the prompt, the agent, or a child relationship (C3).
    pub fn source(&self) -> &'a HookSource {
        &self.entry.context.source
    }

    /// For a child's hook, the `parent_hooks` requirement (reason and stage) that brought it.
    pub fn requirement(&self) -> Option<&'static ParentHookRequirement> {
        self.entry.requirement
    }

    /// For a hook of an optional relationship, that relationship's name: the hook runs only on
    /// threads that enable it.
    pub fn optional_relationship(&self) -> Option<&'static str> {
        self.entry.optional_slot.map(|slot| self.agent.optional_relationships()[slot].name)
    }
}

impl fmt::Debug for ChainedHook<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("ChainedHook");
        debug.field("id", &self.id()).field("kind", &self.kind()).field("source", self.source());
        if let Some(relationship) = self.optional_relationship() {
            debug.field("optional_relationship", &relationship);
        }
        debug.finish()
    }
}
