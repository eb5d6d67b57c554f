//! `#[hook(KIND, id = "...")]`: parse the attribute and function, validate them, expand.

mod expand;
mod keys;
mod parse;
mod validate;

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;
use crate::kinds::KindSpec;

/// The attribute's entry point. On any error the function is still emitted unchanged, and so is
/// the companion item when the id is valid (with a stub definition), so one mistake yields its
/// own error and no cascade of "cannot find function" or "cannot find type" errors.
pub(crate) fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    let function: parse::HookFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                "`#[hook]` goes on a free function: `#[hook(filter_messages, id = \"my_hook\")] fn my_hook(...)`",
            );
            return [item, crate::ctxt::into_compile_errors(error)].into_iter().collect();
        }
    };
    let cx = Ctxt::new();
    let attr = parse::parse_args(&cx, args);
    // What the fallback needs, kept before validation consumes the arguments.
    let fallback_parts = attr.as_ref().map(|attr| (attr.kind.clone(), attr.id.clone(), attr.krate.clone()));
    let checked = attr.and_then(|attr| validate::validate(&cx, attr, &function));
    let errors = cx.check().err().map(crate::ctxt::into_compile_errors);
    // The function's own tokens go out as they came, not reprinted from the parsed item.
    let (allow, expanded) = match checked {
        Some(hook) => {
            // The kind fixes the type `&mut Vec<_>`; clippy's advice to take a slice cannot be
            // followed, so it is silenced on this function alone.
            let allow = hook.takes_vec_in_place().then(|| quote::quote!(#[allow(clippy::ptr_arg)]));
            (allow, expand::expand(&hook))
        }
        None => {
            let fallback = fallback_parts.and_then(|(kind, id, krate)| {
                let id = validate::usable_id(id.as_ref()?)?;
                let kind = KindSpec::find(&kind.to_string());
                let krate = krate.unwrap_or_else(crate::private::default_crate);
                Some(expand::fallback(kind, &id, &function.sig.ident, &function.vis, &krate))
            });
            (None, fallback.unwrap_or_default())
        }
    };
    quote::quote! { #allow #item #expanded #errors }
}
