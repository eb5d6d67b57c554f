//! Composition and resolution: the [`Registry`] of linked hooks, each agent's
//! [`ResolvedAgent`] (which hooks run at each point, in order, with their provenance), the
//! errors a registry or a resolution reports, and [`explain`] / [`explain_json`] to read a
//! resolved agent as text or JSON.
//!
//! [`Runtime::builder().build()`](crate::RuntimeBuilder::build) builds the registry and resolves
//! every agent once; `runtime.agent("name").unwrap().resolved()` reads the result.
//!
//! ```
//! use hooks_runtime::prelude::*;
//! use hooks_runtime::resolution::{Registry, ResolvedAgent, explain};
//!
//! #[hook(filter_messages, id = "keep_recent")]
//! fn keep_recent(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
//!     keep_last_messages(messages, 20);
//! }
//!
//! define_prompt! { name: resolution_prompt, model: "scripted", prompt: "Help.", hooks: [keep_recent] }
//! define_agent! { name: resolution_agent, side_a: { prompt: resolution_prompt } }
//!
//! let registry = Registry::linked();
//! let resolved = ResolvedAgent::resolve(<resolution_agent as Agent>::DEF, &registry).unwrap();
//! assert!(explain(&resolved).contains("keep_recent"));
//! ```

pub use hooks_core::{
    ActiveContext, ChainedHook, DuplicateHookId, HookChain, Registry, RegistryError, ResolutionError, ResolvedAgent,
    explain, explain_json,
};
