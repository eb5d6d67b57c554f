//! Emits what a checked hook adds beside its function: the companion item named by the id, its
//! `Hook` definition, its registration, and the crate-wide uniqueness marker.
//!
//! The expansion is kept small on purpose (compile time): one struct, one `Hook` impl
//! (plus the two marker impls of a thread hook), one static that registers it, one marker macro.
//!
//! Duplicate ids: the companion struct is declared in a hidden module named after the function
//! (unique in its module) and brought in by a glob import. Two hooks with one id in one module
//! then have two struct definitions that do not collide (two glob imports of one name are only
//! an error where the name is used) and impls on two distinct types that do not conflict, so the
//! one error is the marker's, which also catches the same id in two modules.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Path, Visibility};

use super::validate::CheckedHook;
use crate::kinds::{ByValue, Form, KindSpec};
use crate::private::{Private, private_path};

/// The items every hook has, whether its definition is real or a fallback stub.
struct Companion<'a> {
    kind_name: &'a str,
    id: &'a Ident,
    function: &'a Ident,
    vis: &'a Visibility,
    private: Private,
}

/// The companion struct's path from the user's module, `__hook_<function>::<id>`.
struct CompanionPath<'a> {
    module: Ident,
    id: &'a Ident,
}

impl ToTokens for CompanionPath<'_> {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        // Token by token: a quote would be one more stream to splice.
        self.module.to_tokens(tokens);
        <syn::Token![::]>::default().to_tokens(tokens);
        self.id.to_tokens(tokens);
    }
}

impl<'a> Companion<'a> {
    /// The hidden module that declares the struct: named after the function, which is unique in
    /// the user's module.
    fn path(&self) -> CompanionPath<'a> {
        CompanionPath { module: format_ident!("__hook_{}", self.function), id: self.id }
    }

    /// The struct, its glob import, the marker impls of a thread hook (`listed` false for a
    /// user-scope kind, so such a reference fails on the user's path: D7, D11) and `impl Hook`
    /// with the given definition: one quote, since each quote spliced into another is a round
    /// trip to the compiler.
    fn items(&self, listed: bool, governs: bool, def: TokenStream) -> TokenStream {
        let Companion { kind_name, id, function, vis, private } = self;
        let path = self.path();
        let module = &path.module;
        let doc = format!(
            "Hook `{id}` (`{kind_name}`), implemented by [`{function}`]. Reference it by this path in \
             `define_prompt!` or `define_agent!`."
        );
        // An id is unique in the crate (D3), so the companion is reachable crate-wide even when the
        // function is private: a prompt in another module lists it without a visibility error.
        let vis = match vis {
            Visibility::Inherited => quote!(pub(crate)),
            other => quote!(#other),
        };
        let composable = listed.then(|| [format_ident!("ListableHook"), format_ident!("RequirableHook")]);
        let guard = governs.then(|| format_ident!("GuardHook"));
        let composable = composable.iter().flatten().chain(guard.iter());
        quote! {
            #[doc(hidden)]
            mod #module {
                #[doc = #doc]
                #[allow(non_camel_case_types, unreachable_pub)]
                pub struct #id {}
            }
            #[allow(ambiguous_glob_reexports)]
            #vis use #module::*;
            #(impl #private::#composable for #path {})*
            impl #private::Hook for #path {
                const DEF: &'static #private::HookDef = &#def;
            }
        }
    }
}

pub(super) fn expand(hook: &CheckedHook) -> TokenStream {
    let CheckedHook { kind, id, timeout_ms, blocking, on_failure_deny, krate, function, vis, .. } = hook;
    let private = private_path(krate);
    let adapter = adapter(hook, &private);
    let companion = Companion { kind_name: kind.name, id, function, vis, private };
    let private = &companion.private;
    let path = companion.path();
    let variant = format_ident!("{}", kind.variant);
    let id_text = id.to_string();
    let function_text = function.to_string();
    let moves_value =
        hook.form == Form::ByValue && kind.value.as_ref().is_some_and(|value| value.by_value == ByValue::Moved);
    // The flags as the runtime names them (`__private::MOVES_VALUE`, ...), only those set, so
    // the bits are spelled once, in hooks-core; whether the hook is async is its adapter's form.
    let on_failure = match on_failure_deny {
        Some(true) => Some("ON_FAILURE_DENY"),
        Some(false) => Some("ON_FAILURE_ALLOW"),
        None => None,
    };
    let set = [moves_value.then_some("MOVES_VALUE"), blocking.then_some("BLOCKING"), on_failure];
    let set: Vec<_> = set.into_iter().flatten().map(|flag| format_ident!("{flag}")).collect();
    let flags = if set.is_empty() { quote!(0) } else { quote!(#(#private::#set)|*) };
    let timeout = timeout_ms.unwrap_or(0);
    let package = package();
    let def = quote! {
        #private::hook_def(
            #id_text, #private::HookHandler::#variant(#adapter), #flags, #timeout, #package,
            ::core::module_path!(), ::core::file!(), ::core::line!(), #function_text,
        )
    };
    let mut expanded = companion.items(kind.takes_context(), kind.governs(), def);
    function_alias(&companion, &mut expanded);
    let marker = unique_marker(id);
    // The hook's `inventory` entry, collected by `Registry::linked`. `submit!` wraps its items in
    // an anonymous const of its own; another around it would be one more item per hook.
    expanded.extend(quote! {
        #private::inventory::submit! { #private::RegisteredHook(<#path as #private::Hook>::DEF) }
        #marker
    });
    expanded
}

/// The companion of a hook whose validation failed, when its id is known: a definition that is
/// never used (the crate does not compile), so prompts and agents that reference the hook get no
/// second error of their own (thiserror's `fallback.rs`). Not registered, and no marker: the
/// hook's own error is the one to fix.
pub(super) fn fallback(
    kind: Option<&'static KindSpec>,
    id: &Ident,
    function: &Ident,
    vis: &Visibility,
    krate: &Path,
) -> TokenStream {
    let private = private_path(krate);
    // With the kind unknown, a thread kind's stub: any reference to the hook then type-checks.
    let kind = kind.unwrap_or(&crate::kinds::KINDS[0]);
    let companion = Companion { kind_name: kind.name, id, function, vis, private: private.clone() };
    let variant = format_ident!("{}", kind.variant);
    let arity = kind.params.len() + usize::from(kind.takes_context());
    let params = (0..arity).map(|_| quote!(_));
    let id_text = id.to_string();
    let function_text = function.to_string();
    // The one kind whose chain carries an answer rather than `()`.
    let answer = if kind.governs() { quote!(#private::ToolDecision::Allow) } else { quote!(()) };
    let def = quote! {
        #private::hook_def(
            #id_text,
            #private::HookHandler::#variant(#private::Adapter::Sync(|#(#params),*| ::core::result::Result::Ok(#answer))),
            0, 0, ("", ""), "", "", 0, #function_text,
        )
    };
    companion.items(kind.takes_context(), kind.governs(), def)
}

/// The package's name and version as literals: cargo gives them to rustc, in whose process the
/// macro runs, so one `env!` pair per hook is saved. Elsewhere (an IDE's expander) `env!` reads them.
pub(crate) fn package() -> TokenStream {
    match (std::env::var("CARGO_PKG_NAME"), std::env::var("CARGO_PKG_VERSION")) {
        (Ok(name), Ok(version)) => quote!((#name, #version)),
        _ => quote!((::core::env!("CARGO_PKG_NAME"), ::core::env!("CARGO_PKG_VERSION"))),
    }
}

/// A prompt that lists the function's name instead of the id gets an error naming the id
/// (through `ReferencedById`), not rustc's "constant provided when a type was expected".
fn function_alias(companion: &Companion<'_>, tokens: &mut TokenStream) {
    let Companion { id, function, vis, private, .. } = companion;
    if *function == *id || is_primitive_type_name(&function.to_string()) {
        return;
    }
    let vis = match vis {
        Visibility::Inherited => quote!(pub(crate)),
        other => quote!(#other),
    };
    let path = companion.path();
    tokens.extend(quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis type #function = <#path as #private::ReferencedById>::Function;
    });
}

/// A second hook with this id anywhere in the crate defines this `#[macro_export]` macro again:
/// one E0428, at both ids (D3). Its name says what is wrong, since rustc's headline shows it.
fn unique_marker(id: &Ident) -> TokenStream {
    let span: Span = id.span();
    let marker = format_ident!("__hooks_id_must_be_unique_in_crate__{}", id, span = span);
    quote_spanned! {span=>
        #[doc(hidden)]
        #[macro_export]
        macro_rules! #marker { () => {}; }
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

/// The closure coerced to the kind's `HookHandler` fn pointer, sync or async: it casts each argument through
/// the kind's signature trait (so a wrong type is reported on the user's type) and turns the
/// return value into the chain's `HookResult`.
///
/// A transform kind's handler takes its value as `&mut T`. An in-place hook gets that reference;
/// a by-value hook either gets the value moved out of it (and its answer moved back) or, for the
/// kinds that return an optional replacement, a shared borrow of it.
fn adapter(hook: &CheckedHook, private: &Private) -> TokenStream {
    let CheckedHook { kind, function, is_async, param_types, has_context, return_type, form, .. } = hook;
    let value = kind.value.as_ref();
    let mut closure_params = Vec::new();
    let mut call_args = Vec::new();
    for index in 0..kind.params.len() {
        let arg = format_ident!("__hooks_arg{}", index);
        if let Some(ty) = param_types.get(index) {
            let is_value = value.is_some_and(|value| value.index == index);
            let cast_trait = match form {
                Form::InPlace if is_value => format_ident!("{}Param{}InPlace", kind.variant, index + 1),
                _ => format_ident!("{}Param{}", kind.variant, index + 1),
            };
            let cast = match (form, value) {
                (Form::ByValue, Some(value)) if is_value => {
                    let input = match value.by_value {
                        ByValue::Moved => quote!(#private::take_value(&mut *#arg)),
                        ByValue::Replaced => quote!(&*#arg),
                    };
                    quote_spanned!(ty.span()=> <#ty as #private::signature::#cast_trait<'_>>::cast(#input))
                }
                _ => quote_spanned!(ty.span()=> <#ty as #private::signature::#cast_trait<'_>>::cast(#arg)),
            };
            call_args.push(cast);
        }
        closure_params.push(arg);
    }
    if kind.takes_context() {
        if *has_context {
            let ty = &param_types[kind.params.len()];
            let cast_trait = format_ident!("{}Context", kind.variant);
            let context = format_ident!("__hooks_context");
            call_args.push(quote_spanned!(ty.span()=> <#ty as #private::signature::#cast_trait<'_>>::cast(#context)));
            closure_params.push(context);
        } else {
            closure_params.push(format_ident!("_"));
        }
    }
    let return_trait = match form {
        Form::InPlace => format_ident!("{}InPlaceReturn", kind.variant),
        Form::ByValue => format_ident!("{}Return", kind.variant),
    };
    let into_result =
        quote_spanned!(return_type.span()=> <#return_type as #private::signature::#return_trait>::into_hook_result);
    // What the hook's answer does to the chain's value: a by-value transform stores it back.
    let store = match (form, value) {
        (Form::ByValue, Some(value)) => Some((
            format_ident!("__hooks_arg{}", value.index),
            match value.by_value {
                ByValue::Moved => format_ident!("store_moved"),
                ByValue::Replaced => format_ident!("store_replacement"),
            },
        )),
        _ => None,
    };
    // Each form is one quote, so that the adapter is assembled in one pass. An async
    // hook's is spanned at the user's function name, where a future that is not `Send` is
    // reported.
    let span = function.span();
    let future_trait = format_ident!("{}Future", kind.variant);
    match (*is_async, store) {
        (false, None) => quote! {
            #private::Adapter::Sync(|#(#closure_params),*| #into_result(#function(#(#call_args),*)))
        },
        (false, Some((slot, store))) => quote! {
            #private::Adapter::Sync(|#(#closure_params),*| {
                let __hooks_answer = #into_result(#function(#(#call_args),*));
                #private::#store(#slot, __hooks_answer)
            })
        },
        (true, None) => quote_spanned! {span=>
            #private::Adapter::Async(|#(#closure_params),*| #private::signature::#future_trait::into_hook_future(async move {
                #into_result(#function(#(#call_args),*).await)
            }))
        },
        (true, Some((slot, store))) => quote_spanned! {span=>
            #private::Adapter::Async(|#(#closure_params),*| #private::signature::#future_trait::into_hook_future(async move {
                let __hooks_answer = #into_result(#function(#(#call_args),*).await);
                #private::#store(#slot, __hooks_answer)
            }))
        },
    }
}
