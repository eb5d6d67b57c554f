//! Generates the signature traits that `#[hook]` adapters call through. There is one trait per
//! kind and parameter position, one per kind for the return type and one for the future of an
//! async hook, each with `#[diagnostic::on_unimplemented]`, so a wrong type is reported once, on
//! the user's type, naming the kind and the expected signature.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;

use crate::kinds::{KINDS, KindSpec, Param};

pub(crate) fn signature_traits() -> TokenStream {
    KINDS.iter().map(kind_traits).collect()
}

fn kind_traits(kind: &KindSpec) -> TokenStream {
    let signature = kind.signature();
    let returns = kind.accepted_returns_phrase();
    let context = if kind.takes_context() { "; the context parameter may be left out" } else { "" };
    let note = format!(
        "{} `{}` hook is `{signature}`, sync or `async`{context}; it returns {returns}",
        kind.article(),
        kind.name
    );
    let mut out = TokenStream::new();
    let mut position = 0;
    for param in kind.params {
        position += 1;
        out.extend(param_trait(kind, param, &format_ident!("{}Param{position}", kind.variant), position, &note));
    }
    if kind.takes_context() {
        out.extend(param_trait(
            kind,
            &crate::kinds::CONTEXT,
            &format_ident!("{}Context", kind.variant),
            position + 1,
            &note,
        ));
    }
    out.extend(return_trait(kind, &note));
    out.extend(future_trait(kind));
    out
}

fn with_lifetime(ty: &str) -> syn::Type {
    struct AddLifetime;
    impl VisitMut for AddLifetime {
        fn visit_type_reference_mut(&mut self, reference: &mut syn::TypeReference) {
            reference.lifetime = Some(syn::parse_quote!('a));
            syn::visit_mut::visit_type_reference_mut(self, reference);
        }
    }
    let mut ty: syn::Type = syn::parse_str(ty).expect("kind table holds valid types");
    AddLifetime.visit_type_mut(&mut ty);
    ty
}

fn param_trait(kind: &KindSpec, param: &Param, name: &syn::Ident, position: usize, note: &str) -> TokenStream {
    let ty = with_lifetime(param.ty);
    let message = format!(
        "`{}` hook: parameter {position} (`{}`) must be `{}`, found `{{Self}}`",
        kind.name, param.name, param.ty
    );
    let label = format!("expected `{}`", param.ty);
    let doc = format!("Parameter {position} of a `{}` hook. Not public API.", kind.name);
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #name<'a>: Sized {
            /// The identity: the value as the user's function takes it.
            fn cast(value: #ty) -> Self;
        }
        #[diagnostic::do_not_recommend]
        impl<'a> #name<'a> for #ty {
            #[inline(always)]
            fn cast(value: #ty) -> Self { value }
        }
    }
}

fn return_trait(kind: &KindSpec, note: &str) -> TokenStream {
    let name = format_ident!("{}Return", kind.variant);
    let output: syn::Type = syn::parse_str(kind.output).expect("kind table holds valid types");
    let message =
        format!("`{}` hook: the return type must be {}, found `{{Self}}`", kind.name, kind.accepted_returns_phrase());
    let label = format!("expected `{}`", kind.output);
    let doc = format!("The return type of a `{}` hook. Not public API.", kind.name);
    let extras = kind.extra_returns.iter().map(|(extra, conversion)| {
        let extra: syn::Type = syn::parse_str(extra).expect("kind table holds valid types");
        let conversion: syn::Expr = syn::parse_str(conversion).expect("kind table holds valid expressions");
        quote! {
            #[diagnostic::do_not_recommend]
            impl #name for #extra {
                const FALLIBLE: bool = false;
                #[inline(always)]
                fn into_hook_result(self) -> HookResult<#output> { let value = self; Ok(#conversion) }
            }
            #[diagnostic::do_not_recommend]
            impl #name for Result<#extra, HookError> {
                const FALLIBLE: bool = true;
                #[inline(always)]
                fn into_hook_result(self) -> HookResult<#output> { self.map(|value| #conversion) }
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #name {
            /// Whether the type can carry a failure (a `Result`).
            const FALLIBLE: bool;
            /// The value as the chain carries it.
            fn into_hook_result(self) -> HookResult<#output>;
        }
        #[diagnostic::do_not_recommend]
        impl #name for #output {
            const FALLIBLE: bool = false;
            #[inline(always)]
            fn into_hook_result(self) -> HookResult<#output> { Ok(self) }
        }
        #[diagnostic::do_not_recommend]
        impl #name for Result<#output, HookError> {
            const FALLIBLE: bool = true;
            #[inline(always)]
            fn into_hook_result(self) -> HookResult<#output> { self }
        }
        #(#extras)*
    }
}

fn future_trait(kind: &KindSpec) -> TokenStream {
    let name = format_ident!("{}Future", kind.variant);
    let message = format!("`{}` hook: the future of this `async fn` is not `Send`", kind.name);
    let label = "the runtime may move this hook's future to another worker thread";
    let note = "do not hold a value that is not `Send` (an `Rc`, a `RefCell` borrow, a `std::sync::MutexGuard`) across an `.await`; drop it first or use a `Send` alternative such as `Arc` or `tokio::sync::Mutex`";
    let doc = format!("The future of an async `{}` hook. Not public API.", kind.name);
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #name<'a, T>: Sized {
            /// Boxes the future once.
            fn into_hook_future(self) -> HookFuture<'a, T>;
        }
        impl<'a, T, F> #name<'a, T> for F
        where
            F: ::core::future::Future<Output = T> + Send + 'a,
        {
            #[inline(always)]
            fn into_hook_future(self) -> HookFuture<'a, T> { HookFuture::boxed(self) }
        }
    }
}
