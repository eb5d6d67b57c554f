//! Emits the companion item of a checked hook: a braced struct named by the id implementing
//! `Hook`, its `inventory` registration, and the crate-wide uniqueness marker.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::validate::CheckedHook;
use crate::kinds::{ByValue, Form};

pub(super) fn expand(hook: &CheckedHook) -> TokenStream {
    let CheckedHook { kind, id, timeout_ms, blocking, krate, function, vis, is_async, .. } = hook;
    let private = quote!(#krate::__private);
    let variant = format_ident!("{}", kind.variant);
    let id_text = id.to_string();
    let function_text = function.to_string();
    let timeout = match timeout_ms {
        Some(ms) => quote!(::core::option::Option::Some(#ms)),
        None => quote!(::core::option::Option::None),
    };
    let adapter = adapter(hook);
    let moves_value =
        hook.form == Form::ByValue && kind.value.as_ref().is_some_and(|value| value.by_value == ByValue::Moved);
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
    // An id is unique in the crate (D3), so the companion is reachable crate-wide even when the
    // function is private: a prompt in another module lists it without a visibility error.
    let vis = match vis {
        syn::Visibility::Inherited => quote!(pub(crate)),
        other => quote!(#other),
    };
    // A prompt that lists the function's name instead of the id gets an error naming the id
    // (through `HookFunction`), not rustc's "constant provided when a type was expected".
    let function_alias = if *function != *id && !is_primitive_type_name(&function_text) {
        quote! {
            #[doc(hidden)]
            #[allow(non_camel_case_types, dead_code)]
            #vis type #function = #private::HookFunction<#id>;
        }
    } else {
        TokenStream::new()
    };

    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #vis struct #id {}

        impl #private::Hook for #id {
            const DEF: &'static #private::HookDef = &#private::HookDef {
                id: #id_text,
                handler: #private::HookHandler::#variant(#adapter),
                is_async: #is_async,
                moves_value: #moves_value,
                blocking: #blocking,
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
        #function_alias

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

/// A function named like a primitive type keeps its name out of the type namespace, where an
/// alias would shadow the primitive in the user's module.
fn is_primitive_type_name(name: &str) -> bool {
    matches!(
        name,
        "bool"
            | "char"
            | "str"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f32"
            | "f64"
    )
}

/// The closure coerced to the kind's `HookHandler` fn pointer: it casts each argument through
/// the kind's signature trait (so a wrong type is reported on the user's type) and turns the
/// return value into the chain's `HookResult`.
///
/// A transform kind's handler takes its value as `&mut T`. An in-place hook gets that reference;
/// a by-value hook either gets the value moved out of it (and its answer moved back) or, for the
/// kinds that return an optional replacement, a shared borrow of it.
fn adapter(hook: &CheckedHook) -> TokenStream {
    let CheckedHook { kind, krate, function, is_async, param_types, has_context, return_type, form, .. } = hook;
    let private = quote!(#krate::__private);
    let signature = quote!(#private::signature);
    let value = kind.value.as_ref();
    let mut closure_params = Vec::new();
    let mut call_args = Vec::new();
    for (index, _) in kind.params.iter().enumerate() {
        let arg = format_ident!("__hooks_arg{}", index);
        closure_params.push(quote!(#arg));
        let Some(ty) = param_types.get(index) else { continue };
        let is_value = value.is_some_and(|value| value.index == index);
        let cast_trait = match form {
            Form::InPlace if is_value => format_ident!("{}Param{}InPlace", kind.variant, index + 1),
            _ => format_ident!("{}Param{}", kind.variant, index + 1),
        };
        let input = match (form, value) {
            (Form::ByValue, Some(value)) if is_value => match value.by_value {
                ByValue::Moved => quote!(#private::take_value(&mut *#arg)),
                ByValue::Replaced => quote!(&*#arg),
            },
            _ => quote!(#arg),
        };
        call_args.push(quote_spanned!(ty.span()=> <#ty as #signature::#cast_trait<'_>>::cast(#input)));
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
    let return_trait = match form {
        Form::InPlace => format_ident!("{}InPlaceReturn", kind.variant),
        Form::ByValue => format_ident!("{}Return", kind.variant),
    };
    let into_result =
        quote_spanned!(return_type.span()=> <#return_type as #signature::#return_trait>::into_hook_result);
    // Spanned at the user's function name, so a future that is not `Send` is reported there.
    let span = function.span();
    let call = if *is_async {
        quote_spanned!(span=> #function(#(#call_args),*).await)
    } else {
        quote!(#function(#(#call_args),*))
    };
    let answer = quote!(#into_result(#call));
    // What the hook's answer does to the chain's value.
    let outcome = match (form, value) {
        (Form::ByValue, Some(value)) => {
            let slot = format_ident!("__hooks_arg{}", value.index);
            let store = match value.by_value {
                ByValue::Moved => quote!(#private::store_moved),
                ByValue::Replaced => quote!(#private::store_replacement),
            };
            quote!({ let __hooks_answer = #answer; #store(#slot, __hooks_answer) })
        }
        _ => answer,
    };
    let body = if *is_async {
        let future_trait = format_ident!("{}Future", kind.variant);
        let future = quote_spanned!(span=> async move { #outcome });
        quote_spanned! {span=> #signature::#future_trait::into_hook_future(#future) }
    } else {
        quote! { #private::HookFuture::Ready(#outcome) }
    };
    quote! { |#(#closure_params),*| #body }
}
