//! Where emitted code reaches the runtime: every path the macros emit starts from
//! [`private_path`], so moving or versioning the runtime's `__private` module is one edit here.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, quote};
use syn::Path;

/// The runtime crate's path when `crate = path` is not given.
pub(crate) fn default_crate() -> Path {
    syn::parse_quote!(::hooks_runtime)
}

/// The runtime's `__private` module under the crate path `krate`.
pub(crate) fn private_path(krate: &Path) -> Private {
    Private(quote!(#krate::__private).into_iter().collect())
}

/// The path of the runtime's `__private` module, kept as token trees: a macro names it a dozen
/// times per hook, and copying trees into the output stays in the macro, where splicing in a
/// `TokenStream` is a round trip to the compiler each time (compile time of the user's crate).
#[derive(Clone)]
pub(crate) struct Private(Vec<TokenTree>);

impl Private {
    /// The path with every token at `span`: a call whose whole expression must point at the
    /// user's token, such as a const-evaluation failure reported at its caller.
    pub(crate) fn spanned(&self, span: Span) -> Private {
        let mut trees = self.0.clone();
        for tree in &mut trees {
            tree.set_span(span);
        }
        Private(trees)
    }
}

impl ToTokens for Private {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.iter().cloned());
    }
}
