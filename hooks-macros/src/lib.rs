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
mod signature;

use proc_macro::TokenStream;

/// Defines a hook: `#[hook(KIND, id = "snake_case_id")]` on a `fn` or `async fn`.
///
/// See `hooks_runtime`'s documentation for the kinds, their signatures and examples. Optional
/// arguments: `timeout_ms = N` (this hook's timeout), `crate = path` (where `hooks_runtime` is).
#[proc_macro_attribute]
pub fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    hook::hook(args.into(), item.into()).into()
}

/// Defines a prompt: `define_prompt! { name: ..., model: "...", prompt: "...", tools: [...], hooks: [...] }`.
///
/// See `hooks_runtime`'s documentation for every field.
#[proc_macro]
pub fn define_prompt(input: TokenStream) -> TokenStream {
    compose::define_prompt(input.into()).into()
}

/// Defines an agent: `define_agent! { name: ..., side_a: { prompt: ... }, side_b: { human: true }, ... }`.
///
/// See `hooks_runtime`'s documentation for every field.
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
