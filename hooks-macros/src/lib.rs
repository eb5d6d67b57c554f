//! Procedural macros of the agent hooks framework. Use them through `hooks-runtime`, which
//! re-exports them with the types their expansion names:
//!
//! - [`macro@hook`]: `#[hook(KIND, id = "...")]` on a function;
//! - [`define_prompt!`]: a prompt with its model, text, tools and hooks;
//! - [`define_agent!`]: an agent with its sides, subagents, hooks and parent-hook requirements.
//!
//! Each macro is parse -> validate -> expand; every error is collected and reported on the
//! user's token, and the original item is always emitted so one mistake yields one error.

mod compose;
mod ctxt;
mod fields;
mod hook;
mod kinds;
mod private;
mod signature;
mod suggest;

use proc_macro::TokenStream;

#[doc = include_str!("../docs/hook.md")]
#[proc_macro_attribute]
pub fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    hook::hook(args.into(), item.into()).into()
}

#[doc = include_str!("../docs/define_prompt.md")]
#[proc_macro]
pub fn define_prompt(input: TokenStream) -> TokenStream {
    compose::define_prompt(input.into()).into()
}

#[doc = include_str!("../docs/define_agent.md")]
#[proc_macro]
pub fn define_agent(input: TokenStream) -> TokenStream {
    compose::define_agent(input.into()).into()
}

/// Emits the signature traits of every kind. Not public API: `hooks_runtime::__private` calls it
/// once.
#[doc(hidden)]
#[proc_macro]
pub fn __signature_traits(input: TokenStream) -> TokenStream {
    let _ = input;
    signature::signature_traits().into()
}
