//! Where emitted code reaches the runtime: every path the macros emit starts from
//! [`private_path`], so moving or versioning the runtime's `__private` module is one edit here.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Path;

/// The runtime crate's path when `crate = path` is not given.
pub(crate) fn default_crate() -> Path {
    syn::parse_quote!(::hooks_runtime)
}

/// The runtime's `__private` module under the crate path `krate`.
pub(crate) fn private_path(krate: &Path) -> TokenStream {
    quote!(#krate::__private)
}
