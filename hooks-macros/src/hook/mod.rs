//! `#[hook(KIND, id = "...")]`: parse the attribute and function, validate them, expand.

mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;

use crate::ctxt::Ctxt;

/// The attribute's entry point. On any error the function is still emitted unchanged, so one
/// mistake yields its own error and no cascade of "cannot find function" errors.
pub(crate) fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                "`#[hook]` goes on a free function: `#[hook(filter_messages, id = \"my_hook\")] fn my_hook(...)`",
            );
            return [item, error.into_compile_error()].into_iter().collect();
        }
    };
    let cx = Ctxt::new();
    let attr = parse::parse_args(&cx, args);
    let checked = attr.and_then(|attr| validate::validate(&cx, attr, &function));
    let errors = cx.check().err().map(syn::Error::into_compile_error);
    let mut function = function;
    let expanded = match checked {
        Some(hook) => {
            if hook.takes_vec_in_place() {
                // The kind fixes the type `&mut Vec<_>`; clippy's advice to take a slice cannot
                // be followed, so it is silenced on this function alone.
                function.attrs.push(syn::parse_quote!(#[allow(clippy::ptr_arg)]));
            }
            expand::expand(&hook)
        }
        None => TokenStream::new(),
    };
    quote::quote! { #function #expanded #errors }
}
