//! Generates the signature traits that `#[hook]` adapters call through. There is one trait per
//! kind and parameter position, one per kind for the return type and one for the future of an
//! async hook, each with `#[diagnostic::on_unimplemented]`, so a wrong type is reported once, on
//! the user's type, naming the kind and the expected signature.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;

use crate::kinds::{ByValue, KINDS, KindSpec};

pub(crate) fn signature_traits() -> TokenStream {
    KINDS.iter().map(kind_traits).collect()
}

fn kind_traits(kind: &KindSpec) -> TokenStream {
    let note = kind.forms_phrase();
    let mut out = TokenStream::new();
    let mut position = 0;
    for (index, param) in kind.params.iter().enumerate() {
        position += 1;
        let name = format_ident!("{}Param{position}", kind.variant);
        match &kind.value {
            Some(value) if value.index == index => {
                let in_place = format!("&mut {}", value.ty);
                let expected = format!("`{}` or, in place, `{in_place}`", param.ty);
                out.extend(param_trait(kind, param.ty, &expected, param.name, &name, position, &note));
                let name = format_ident!("{}Param{position}InPlace", kind.variant);
                out.extend(param_trait(kind, &in_place, &expected, param.name, &name, position, &note));
            }
            _ => {
                let expected = format!("`{}`", param.ty);
                out.extend(param_trait(kind, param.ty, &expected, param.name, &name, position, &note));
            }
        }
    }
    if kind.takes_context() {
        let context = &crate::kinds::CONTEXT;
        out.extend(param_trait(
            kind,
            context.ty,
            &format!("`{}`", context.ty),
            context.name,
            &format_ident!("{}Context", kind.variant),
            position + 1,
            &note,
        ));
    }
    out.extend(return_trait(kind, &note));
    if kind.value.is_some() {
        out.extend(in_place_return_trait(kind, &note));
    }
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

/// The identity trait of one parameter position, implemented for `ty` alone. `expected` is what
/// the error says the position accepts: both forms at a transform kind's value position.
fn param_trait(
    kind: &KindSpec,
    ty: &str,
    expected: &str,
    param_name: &str,
    name: &syn::Ident,
    position: usize,
    note: &str,
) -> TokenStream {
    let message =
        format!("`{}` hook: parameter {position} (`{param_name}`) must be {expected}, found `{{Self}}`", kind.name);
    let label = format!("expected {expected}");
    let ty = with_lifetime(ty);
    let doc = format!("Parameter {position} of a `{}` hook. Not public API.", kind.name);
    // The one type is accepted through a blanket impl over a hidden trait: rustc then says only
    // that the user's type does not implement the trait, instead of adding "but it is implemented
    // for ..." with a path into this crate, which `do_not_recommend` on a plain impl leaves in.
    let accepted = format_ident!("{name}Accepted");
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #name<'a>: Sized {
            /// The identity: the value as the user's function takes it.
            fn cast(value: #ty) -> Self;
        }
        #[doc(hidden)]
        pub trait #accepted<'a>: Sized {
            fn cast(value: #ty) -> Self;
        }
        impl<'a> #accepted<'a> for #ty {
            #[inline(always)]
            fn cast(value: #ty) -> Self { value }
        }
        #[diagnostic::do_not_recommend]
        impl<'a, T: #accepted<'a>> #name<'a> for T {
            #[inline(always)]
            fn cast(value: #ty) -> Self { <T as #accepted<'a>>::cast(value) }
        }
    }
}

fn return_trait(kind: &KindSpec, note: &str) -> TokenStream {
    let name = format_ident!("{}Return", kind.variant);
    let output: syn::Type = syn::parse_str(kind.output).expect("kind table holds valid types");
    let form = match &kind.value {
        Some(value) if value.by_value == ByValue::Moved => {
            format!(" by value (taking `{}`)", kind.params[value.index].ty)
        }
        Some(value) => format!(" taking `{}`", kind.params[value.index].ty),
        None => String::new(),
    };
    let message = format!(
        "`{}` hook{form}: the return type must be {}, found `{{Self}}`",
        kind.name,
        kind.accepted_returns_phrase()
    );
    let label = format!("expected `{}`", kind.output);
    let doc = format!("The return type of a `{}` hook. Not public API.", kind.name);
    let extras = kind.extra_returns.iter().map(|(extra, conversion)| {
        let extra: syn::Type = syn::parse_str(extra).expect("kind table holds valid types");
        let conversion: syn::Expr = syn::parse_str(conversion).expect("kind table holds valid expressions");
        quote! {
            #[diagnostic::do_not_recommend]
            impl #name for #extra {
                #[inline(always)]
                fn into_hook_result(self) -> HookResult<#output> { let value = self; Ok(#conversion) }
            }
            #[diagnostic::do_not_recommend]
            impl #name for Result<#extra, HookError> {
                #[inline(always)]
                fn into_hook_result(self) -> HookResult<#output> { self.map(|value| #conversion) }
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #name {
            /// The value as the chain carries it.
            fn into_hook_result(self) -> HookResult<#output>;
        }
        #[diagnostic::do_not_recommend]
        impl #name for #output {
            #[inline(always)]
            fn into_hook_result(self) -> HookResult<#output> { Ok(self) }
        }
        #[diagnostic::do_not_recommend]
        impl #name for Result<#output, HookError> {
            #[inline(always)]
            fn into_hook_result(self) -> HookResult<#output> { self }
        }
        #(#extras)*
    }
}

/// The return type of a transform kind's in-place form: `()` or `Result<(), HookError>`.
fn in_place_return_trait(kind: &KindSpec, note: &str) -> TokenStream {
    let value = kind.value.as_ref().expect("only transform kinds have an in-place form");
    let name = format_ident!("{}InPlaceReturn", kind.variant);
    let message = format!(
        "`{}` hook in place (taking `&mut {}`): the return type must be `()` or `Result<(), HookError>`, found `{{Self}}`",
        kind.name, value.ty
    );
    let label = "expected `()` or `Result<(), HookError>`: an in-place hook changes the value it borrows";
    let doc = format!("The return type of an in-place `{}` hook. Not public API.", kind.name);
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #name {
            /// The hook's outcome; the value is already changed in place.
            fn into_hook_result(self) -> HookResult<()>;
        }
        #[diagnostic::do_not_recommend]
        impl #name for () {
            #[inline(always)]
            fn into_hook_result(self) -> HookResult<()> { Ok(()) }
        }
        #[diagnostic::do_not_recommend]
        impl #name for Result<(), HookError> {
            #[inline(always)]
            fn into_hook_result(self) -> HookResult<()> { self }
        }
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
            fn into_hook_future(self) -> BoxedHookFuture<'a, T>;
        }
        impl<'a, T, F> #name<'a, T> for F
        where
            F: ::core::future::Future<Output = T> + Send + 'a,
        {
            #[inline(always)]
            fn into_hook_future(self) -> BoxedHookFuture<'a, T> { ::std::boxed::Box::pin(self) }
        }
    }
}
