//! Emits the companion item of a checked hook: a braced struct named by the id implementing
//! `Hook`, its `inventory` registration, and the crate-wide uniqueness marker.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::validate::CheckedHook;

pub(super) fn expand(hook: &CheckedHook) -> TokenStream {
    let CheckedHook { kind, id, timeout_ms, krate, function, vis, is_async, .. } = hook;
    let private = quote!(#krate::__private);
    let variant = format_ident!("{}", kind.variant);
    let id_text = id.to_string();
    let function_text = function.to_string();
    let timeout = match timeout_ms {
        Some(ms) => quote!(::core::option::Option::Some(#ms)),
        None => quote!(::core::option::Option::None),
    };
    let adapter = adapter(hook);
    let return_type = &hook.return_type;
    let return_trait = format_ident!("{}Return", kind.variant);
    let fallible = quote_spanned!(return_type.span()=> <#return_type as #private::signature::#return_trait>::FALLIBLE);
    // Thread hooks may be listed in `hooks` and required in `parent_hooks`; user-scope hooks
    // lack these impls, so such a reference fails on the user's path (D7, D11).
    let composable = if kind.takes_context() {
        quote! {
            impl #private::ListableHook for #id {}
            impl #private::RequirableHook for #id {}
        }
    } else {
        TokenStream::new()
    };
    let doc = format!(
        "Hook `{id_text}` (`{}`), implemented by [`{function_text}`]. Reference it by this path in \
         `define_prompt!` or `define_agent!`.",
        kind.name
    );
    let unique_marker = format_ident!("__hooks_id_must_be_unique_in_crate__{}", id, span = id.span());

    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #id {}

        impl #private::Hook for #id {
            const DEF: &'static #private::HookDef = &#private::HookDef {
                id: #id_text,
                handler: #private::HookHandler::#variant(#adapter),
                is_async: #is_async,
                fallible: #fallible,
                timeout_ms: #timeout,
                location: #private::HookLocation {
                    package: #private::PackageSignature::new_static(
                        ::core::env!("CARGO_PKG_NAME"),
                        ::core::env!("CARGO_PKG_VERSION"),
                    ),
                    module_path: ::core::module_path!(),
                    file: ::core::file!(),
                    line: ::core::line!(),
                    function: #function_text,
                },
            };
        }

        #composable

        const _: () = {
            #private::inventory::submit! {
                #private::RegisteredHook(<#id as #private::Hook>::DEF)
            }
        };

        // A second hook with this id anywhere in the crate defines this macro again: E0428.
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #unique_marker { () => {}; }
    }
}

/// The closure coerced to the kind's `HookHandler` fn pointer: it casts each argument through
/// the kind's signature trait (so a wrong type is reported on the user's type) and turns the
/// return value into the chain's `HookResult`.
fn adapter(hook: &CheckedHook) -> TokenStream {
    let CheckedHook { kind, krate, function, is_async, param_types, has_context, return_type, .. } = hook;
    let signature = quote!(#krate::__private::signature);
    let mut closure_params = Vec::new();
    let mut call_args = Vec::new();
    for (index, _) in kind.params.iter().enumerate() {
        let arg = format_ident!("__hooks_arg{}", index);
        closure_params.push(quote!(#arg));
        if let Some(ty) = param_types.get(index) {
            let cast_trait = format_ident!("{}Param{}", kind.variant, index + 1);
            call_args.push(quote_spanned!(ty.span()=> <#ty as #signature::#cast_trait<'_>>::cast(#arg)));
        }
    }
    if kind.takes_context() {
        if *has_context {
            let ty = &param_types[kind.params.len()];
            let cast_trait = format_ident!("{}Context", kind.variant);
            closure_params.push(quote!(__hooks_context));
            call_args.push(quote_spanned!(ty.span()=> <#ty as #signature::#cast_trait<'_>>::cast(__hooks_context)));
        } else {
            closure_params.push(quote!(_));
        }
    }
    let return_trait = format_ident!("{}Return", kind.variant);
    let into_result =
        quote_spanned!(return_type.span()=> <#return_type as #signature::#return_trait>::into_hook_result);
    let body = if *is_async {
        let future_trait = format_ident!("{}Future", kind.variant);
        // Spanned at the user's function name, so a future that is not `Send` is reported there.
        let span = function.span();
        let future = quote_spanned!(span=> async move { #into_result(#function(#(#call_args),*).await) });
        quote_spanned! {span=> #signature::#future_trait::into_hook_future(#future) }
    } else {
        quote! {
            #krate::__private::HookFuture::Ready(#into_result(#function(#(#call_args),*)))
        }
    };
    quote! { |#(#closure_params),*| #body }
}
