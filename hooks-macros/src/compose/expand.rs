//! Pieces shared by the prompt and agent expansions.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned;

use crate::fields::path_text;

pub(super) fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// `listed_hook::<path>()`, spanned at the path so a non-hook or user-scope hook is reported on
/// the user's token (D6, D7).
pub(super) fn listed_hook(private: &TokenStream, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::listed_hook::<#path>())
}

/// `required_hook::<path>()` (D11).
pub(super) fn required_hook(private: &TokenStream, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::required_hook::<#path>())
}

/// `prompt_def::<path>()` (D6).
pub(super) fn prompt_def(private: &TokenStream, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::prompt_def::<#path>())
}

/// `agent_def::<path>()` (D6).
pub(super) fn agent_def(private: &TokenStream, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::agent_def::<#path>())
}

/// Const assertions that paths written differently do not name one hook (D4, D9): identical
/// paths were already reported by the macro, aliases (`a::x` and a `use`d `x`) only const
/// evaluation can see. `what` completes "already listed in ...".
pub(super) fn distinct_hooks(private: &TokenStream, paths: &[Path], what: &str) -> TokenStream {
    let mut out = TokenStream::new();
    for (index, later) in paths.iter().enumerate() {
        for earlier in &paths[..index] {
            let (earlier_text, later_text) = (path_text(earlier), path_text(later));
            if earlier_text == later_text {
                continue;
            }
            let message =
                format!("`{later_text}` names the same hook as `{earlier_text}`, already {what}; remove one of them");
            // The first token carries the path's start and the group its end, so the error
            // underlines the whole path on stable Rust.
            let mut tokens = later.to_token_stream().into_iter();
            let first = tokens.next().map_or_else(proc_macro2::Span::call_site, |t| t.span());
            let last = tokens.last().map_or(first, |t| t.span());
            let assert = quote_spanned!(first=> ::core::assert!);
            let args = quote_spanned!(last=> (
                !#private::same_hook(<#earlier as #private::Hook>::DEF, <#later as #private::Hook>::DEF),
                #message
            ));
            out.extend(quote!(const _: () = #assert #args;));
        }
    }
    out
}
