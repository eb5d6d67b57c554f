//! Procedural macros of the agent hooks framework. Use them through `hooks-runtime`, which
//! re-exports them with the types their expansion names:
//!
//! - [`macro@hook`]: `#[hook(KIND, id = "...")]` on a function.
//!
//! Each macro is parse -> validate -> expand; every error is collected and reported on the
//! user's token, and the original item is always emitted so one mistake yields one error.

mod ctxt;
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

/// Emits the signature traits of every kind. Not public API: `hooks_runtime::__private` calls it
/// once.
#[doc(hidden)]
#[proc_macro]
pub fn __signature_traits(input: TokenStream) -> TokenStream {
    let _ = input;
    signature::signature_traits().into()
}
