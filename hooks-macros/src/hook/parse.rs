//! Parses the attribute arguments (`KIND, id = "...", timeout_ms = N, blocking, on_failure =
//! deny|allow, crate = path`)
//! and the function's signature.

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Attribute, Ident, LitInt, LitStr, Path, Signature, Token, Visibility};

use super::keys;
use crate::ctxt::Ctxt;

/// The attribute as written, each value with its own tokens for error spans.
pub(super) struct HookArgs {
    pub(super) kind: Ident,
    pub(super) id: Option<LitStr>,
    /// `timeout_ms = N`: the key (where a timeout that cannot be enforced is reported) and N.
    pub(super) timeout_ms: Option<(Ident, LitInt)>,
    /// `blocking`: the sync hook blocks its thread, so the runtime lets the worker go first.
    pub(super) blocking: Option<Ident>,
    /// `on_failure = deny|allow`: the key and the value as written (checked in `validate`).
    pub(super) on_failure: Option<(Ident, syn::Expr)>,
    pub(super) krate: Option<Path>,
    /// The span of the whole attribute argument list, for "missing `id`".
    pub(super) span: Span,
    /// An unknown key was reported (likely a misspelt `id`): no second error for a missing id.
    pub(super) had_unknown_key: bool,
}

enum Arg {
    Id(Ident, LitStr),
    TimeoutMs(Ident, LitInt),
    Blocking(Ident),
    OnFailure(Ident, syn::Expr),
    Crate(Token![crate], Path),
    Unknown(Ident),
}

impl Parse for Arg {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(Token![crate]) {
            let key: Token![crate] = input.parse()?;
            input.parse::<Token![=]>()?;
            return Ok(Arg::Crate(key, input.parse()?));
        }
        let key: Ident = input.parse()?;
        let arg = match key.to_string().as_str() {
            keys::ID => {
                input.parse::<Token![=]>()?;
                Arg::Id(
                    key,
                    input
                        .parse()
                        .map_err(|e| syn::Error::new(e.span(), "expected a string literal: `id = \"my_hook\"`"))?,
                )
            }
            keys::TIMEOUT_MS => {
                input.parse::<Token![=]>()?;
                Arg::TimeoutMs(
                    key,
                    input.parse().map_err(|e| syn::Error::new(e.span(), "expected an integer: `timeout_ms = 500`"))?,
                )
            }
            keys::BLOCKING => {
                if input.peek(Token![=]) {
                    return Err(syn::Error::new(
                        key.span(),
                        "`blocking` takes no value: write `blocking` alone, e.g. `#[hook(filter_messages, id = \"x\", blocking)]`",
                    ));
                }
                Arg::Blocking(key)
            }
            keys::ON_FAILURE => {
                input.parse::<Token![=]>().map_err(|e| {
                    syn::Error::new(e.span(), "expected a value: `on_failure = deny` or `on_failure = allow`")
                })?;
                Arg::OnFailure(key, input.parse()?)
            }
            _ => {
                // Skip the value so the rest of the list can still be checked.
                if input.parse::<Option<Token![=]>>()?.is_some() {
                    input.parse::<syn::Expr>()?;
                }
                Arg::Unknown(key)
            }
        };
        Ok(arg)
    }
}

/// Parses the arguments; every problem goes to `cx`. `None` only when not even the kind can be
/// read.
pub(super) fn parse_args(cx: &Ctxt, args: TokenStream) -> Option<HookArgs> {
    let span = if args.is_empty() { Span::call_site() } else { spanned_range(&args) };
    let parser = |input: ParseStream<'_>| -> syn::Result<(Ident, Vec<Arg>)> {
        let kind: Ident = input.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected the hook kind first: `#[hook(filter_messages, id = \"my_hook\")]`")
        })?;
        if input.peek(Token![=]) {
            return Err(syn::Error::new(
                kind.span(),
                format!(
                    "the hook kind is missing: it comes first, before `{kind}`\nhelp: write `#[hook(KIND, {kind} = ...)]` with a kind such as `filter_messages` or `after_create_message`"
                ),
            ));
        }
        let mut args = Vec::new();
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            args.push(input.parse()?);
        }
        Ok((kind, args))
    };
    let (kind, list) = match parser.parse2(args) {
        Ok(parsed) => parsed,
        Err(error) => {
            cx.syn_error(error);
            return None;
        }
    };
    let mut parsed = HookArgs {
        kind,
        id: None,
        timeout_ms: None,
        blocking: None,
        on_failure: None,
        krate: None,
        span,
        had_unknown_key: false,
    };
    for arg in list {
        match arg {
            Arg::Id(key, value) => set_once(cx, &mut parsed.id, key, value),
            Arg::TimeoutMs(key, value) => set_once(cx, &mut parsed.timeout_ms, key.clone(), (key, value)),
            Arg::Blocking(key) => set_once(cx, &mut parsed.blocking, key.clone(), key),
            Arg::OnFailure(key, value) => set_once(cx, &mut parsed.on_failure, key.clone(), (key, value)),
            Arg::Crate(key, value) => set_once(cx, &mut parsed.krate, Ident::new(keys::CRATE, key.span), value),
            Arg::Unknown(key) => {
                parsed.had_unknown_key = true;
                let name = key.to_string();
                let hint = crate::suggest::did_you_mean(&name, keys::KEYS.iter().copied())
                    .map(|known| format!("; did you mean `{known}`?"))
                    .unwrap_or_default();
                cx.error_spanned_by(
                    &key,
                    format!("unknown `#[hook]` argument `{name}`{hint}\nexpected one of: {}", keys::expected_list()),
                );
            }
        }
    }
    Some(parsed)
}

fn set_once<T>(cx: &Ctxt, slot: &mut Option<T>, key: Ident, value: T) {
    if slot.is_some() {
        cx.error_spanned_by(&key, format!("`{key}` is set more than once; keep one"));
    } else {
        *slot = Some(value);
    }
}

fn spanned_range(tokens: &TokenStream) -> Span {
    let mut iter = tokens.clone().into_iter();
    let first = iter.next().map(|t| t.span()).unwrap_or_else(Span::call_site);
    let last = iter.last().map(|t| t.span()).unwrap_or(first);
    first.join(last).unwrap_or(first)
}

/// The function under `#[hook]`, as far as the macro reads it. The body is only checked to be a
/// block, not parsed: the function's tokens are re-emitted as they came, and parsing every
/// statement of every hook in a debug-built macro is most of the parse's cost.
pub(super) struct HookFn {
    pub(super) vis: Visibility,
    pub(super) sig: Signature,
}

impl Parse for HookFn {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        input.call(Attribute::parse_outer)?;
        let vis = input.parse()?;
        let sig = input.parse()?;
        let body;
        syn::braced!(body in input);
        body.parse::<TokenStream>()?;
        Ok(HookFn { vis, sig })
    }
}
