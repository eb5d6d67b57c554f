//! Collects every error of one macro invocation, so the user sees all of them at once.

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// An error collector. Dropping it without [`Ctxt::check`] is a bug in this crate and panics.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt { errors: RefCell::new(Some(Vec::new())) }
    }

    /// Records an error spanning `tokens`.
    pub(crate) fn error_spanned_by(&self, tokens: impl ToTokens, message: impl Display) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records an error at `span`.
    pub(crate) fn error_at(&self, span: proc_macro2::Span, message: impl Display) {
        self.syn_error(syn::Error::new(span, message));
    }

    /// Records a syn error as it is.
    pub(crate) fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().as_mut().expect("Ctxt used after check").push(error);
    }

    /// Whether any error was recorded so far.
    pub(crate) fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|errors| !errors.is_empty())
    }

    /// All recorded errors combined into one, or `Ok` when there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().expect("Ctxt checked twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else { return Ok(()) };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}

/// `error` as compile errors inside an anonymous constant rather than as items of their own.
///
/// rustc reports no unresolved name of a module in which an item-position macro failed (an
/// item it did not expand could have been the missing one), so a bare `compile_error!` next to
/// the user's items would hide a typo in a hook reference until every other error is fixed. In
/// the body of `const _: () = { ... };` the error is the same, at the same span, and the rest
/// of the module is still checked, so both errors show in one build.
pub(crate) fn into_compile_errors(error: syn::Error) -> proc_macro2::TokenStream {
    let errors = error.into_compile_error();
    quote::quote! { const _: () = { #errors }; }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
