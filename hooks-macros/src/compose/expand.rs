//! Pieces shared by the prompt and agent expansions.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned;

use crate::fields::path_text;
use crate::private::Private;

/// `listed_hook::<path>()`, spanned at the path so a non-hook or user-scope hook is reported on
/// the user's token (D6, D7).
pub(super) fn listed_hook(private: &Private, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::listed_hook::<#path>())
}

/// `required_hook::<path>()` (D11).
pub(super) fn required_hook(private: &Private, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::required_hook::<#path>())
}

/// `prompt_def::<path>()` (D6).
pub(super) fn prompt_def(private: &Private, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::prompt_def::<#path>())
}

/// `agent_def::<path>()` (D6).
pub(super) fn agent_def(private: &Private, path: &Path) -> TokenStream {
    quote_spanned!(path.span()=> #private::agent_def::<#path>())
}

/// A const check that paths written differently do not name one hook (D4, D9): identical paths
/// were already reported by the macro, aliases (`a::x` and a `use`d `x`) only const evaluation
/// can see. `what` completes "already listed in ...".
///
/// One const item per list, each definition named once, and one failing call per later path
/// whose message is picked by the earlier one's index: the pairwise form (an item and an
/// `assert!` per pair) cost a sixth of a 200-hook, 50-prompt crate's compile time, and a
/// `panic!` per path two macro expansions each.
pub(super) fn distinct_hooks(private: &Private, paths: &[Path], what: &str) -> TokenStream {
    let texts: Vec<String> = paths.iter().map(path_text).collect();
    // Spanned at the call site in both places, so that a path from a `macro_rules!` expansion,
    // whose tokens carry that macro's hygiene, does not hide the binding from its use.
    let earlier = proc_macro2::Ident::new("__hooks_earlier", proc_macro2::Span::call_site());
    let mut arms = Vec::new();
    for (index, later) in paths.iter().enumerate().skip(1) {
        // A pair written alike is reported by the macro already; its message is never picked.
        if texts[..index].iter().all(|text| *text == texts[index]) {
            continue;
        }
        let messages = texts[..index].iter().map(|text| {
            format!("`{}` names the same hook as `{text}`, already {what}; remove one of them", texts[index])
        });
        // The first token carries the path's start and the group its end, so the error
        // underlines the whole path on stable Rust.
        let mut tokens = later.to_token_stream().into_iter();
        let first = tokens.next().map_or_else(proc_macro2::Span::call_site, |t| t.span());
        let last = tokens.last().map_or(first, |t| t.span());
        let fail = private.spanned(first);
        let fail = quote_spanned!(first=> #fail::repeated_hook);
        let args = quote_spanned!(last=> ([#(#messages),*][#earlier]));
        arms.push(quote!(#index => #fail #args,));
    }
    if arms.is_empty() {
        return TokenStream::new();
    }
    let defs = paths.iter().map(|path| quote!(<#path as #private::Hook>::DEF));
    quote! {
        const _: () = match #private::first_repeat(&[#(#defs),*]) {
            ::core::option::Option::Some((#earlier, later)) => match later { #(#arms)* _ => {} },
            ::core::option::Option::None => {}
        };
    }
}
