//! Checks the attribute and the function's shape: kind (D1), id (D2), parameter count (D5).
//! Parameter and return *types* are checked by rustc through the signature traits, so those
//! errors land on the user's type tokens.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{FnArg, Ident, LitStr, Path, ReturnType, Type, Visibility};

use super::parse::{HookArgs, HookFn};
use crate::ctxt::Ctxt;
use crate::kinds::{ByValue, Form, KindSpec};

/// A hook ready to expand.
pub(super) struct CheckedHook {
    pub(super) kind: &'static KindSpec,
    pub(super) id: Ident,
    pub(super) timeout_ms: Option<u64>,
    pub(super) blocking: bool,
    /// `on_failure`: `Some(true)` for `deny`, `Some(false)` for `allow`; `None` for a kind
    /// that governs nothing.
    pub(super) on_failure_deny: Option<bool>,
    pub(super) krate: Path,
    pub(super) function: Ident,
    pub(super) vis: Visibility,
    pub(super) is_async: bool,
    /// The user's parameter types, named lifetimes replaced by `'_`.
    pub(super) param_types: Vec<Type>,
    /// Whether the user's function takes the trailing context.
    pub(super) has_context: bool,
    /// The user's return type; `()` when omitted.
    pub(super) return_type: Type,
    /// By value or in place, read from the value parameter's type (D12).
    pub(super) form: Form,
}

impl CheckedHook {
    /// Whether the hook takes a `&mut Vec<_>` in place.
    pub(super) fn takes_vec_in_place(&self) -> bool {
        self.form == Form::InPlace && self.kind.value.as_ref().is_some_and(|value| value.ty.starts_with("Vec<"))
    }
}

pub(super) fn validate(cx: &Ctxt, args: HookArgs, function: &HookFn) -> Option<CheckedHook> {
    let kind = check_kind(cx, &args.kind);
    let id = check_id(cx, &args);
    let timeout_ms = args.timeout_ms.as_ref().and_then(|(_, lit)| match lit.base10_parse::<u64>() {
        Ok(0) | Err(_) => {
            cx.error_spanned_by(
                lit,
                "`timeout_ms` must be a whole number of milliseconds above 0, e.g. `timeout_ms = 500`",
            );
            None
        }
        Ok(ms) => Some(ms),
    });
    check_shape(cx, function);
    check_timeout_enforceable(cx, &args, function);
    if let Some(blocking) = args.blocking.as_ref().filter(|_| function.sig.asyncness.is_some()) {
        cx.error_spanned_by(
            blocking,
            "`blocking` is for sync hooks that block their thread; an `async fn` hook yields while it waits\nhelp: remove `blocking`, or make the hook a plain `fn`",
        );
    }
    let kind = kind?;
    let on_failure_deny = check_on_failure(cx, kind, &args);
    check_context_position(cx, kind, function)?;
    let params = check_arity(cx, kind, function)?;
    check_borrowed_return(cx, kind, function)?;
    let krate = args.krate.unwrap_or_else(crate::private::default_crate);
    if cx.has_errors() {
        return None;
    }
    let mut param_types: Vec<Type> = params;
    for ty in &mut param_types {
        EraseLifetimes.visit_type_mut(ty);
    }
    let mut return_type = match &function.sig.output {
        // Spanned at the parameter list's closing parenthesis, where `-> T` would go.
        ReturnType::Default => syn::parse_quote_spanned!(function.sig.paren_token.span.close()=> ()),
        ReturnType::Type(_, ty) => (**ty).clone(),
    };
    EraseLifetimes.visit_type_mut(&mut return_type);
    let has_context = kind.takes_context() && param_types.len() == kind.params.len() + 1;
    let form = match kind.value.as_ref().map(|value| (value, &param_types[value.index])) {
        Some((_, Type::Reference(reference))) if reference.mutability.is_some() => Form::InPlace,
        Some((value, ty @ Type::Reference(_))) if value.by_value == ByValue::Moved => {
            // A shared borrow of a value the hook should change: neither form, and two trait
            // errors (parameter and return) would not say why. One error that names both.
            let name = kind.params[value.index].name;
            cx.error_spanned_by(
                ty,
                format!(
                    "{} `{}` hook changes `{name}`, so it cannot take it by shared reference\n\
                     help: take it in place, `{name}: &mut {ty}`, returning `()` or `Result<(), HookError>`, \
                     or by value, `{name}: {ty}`, returning the new value",
                    kind.article(),
                    kind.name,
                    ty = value.ty,
                ),
            );
            return None;
        }
        _ => Form::ByValue,
    };
    Some(CheckedHook {
        kind,
        id: id?,
        timeout_ms,
        blocking: args.blocking.is_some(),
        on_failure_deny,
        krate,
        function: function.sig.ident.clone(),
        vis: function.vis.clone(),
        is_async: function.sig.asyncness.is_some(),
        param_types,
        has_context,
        return_type,
        form,
    })
}

/// A plain sync hook runs to its end on its worker and nothing can cut it off, so a
/// `timeout_ms` on it would promise what the runtime cannot do. An `async fn` is cut off at its
/// timeout; a `blocking` one's late answer is discarded.
fn check_timeout_enforceable(cx: &Ctxt, args: &HookArgs, function: &HookFn) {
    let Some((key, _)) = &args.timeout_ms else { return };
    if args.blocking.is_some() || function.sig.asyncness.is_some() {
        return;
    }
    cx.error_spanned_by(
        key,
        "`timeout_ms` cannot be enforced on a plain sync hook: it runs to its end on its worker thread, \
         and its answer is kept however long it took\n\
         help: make it an `async fn`, which is cut off at the timeout, or add `blocking`, whose answer after \
         the timeout is discarded; or remove `timeout_ms`",
    );
}

/// G1: a `before_tool_call` hook says whether it fails closed or open; no other kind takes
/// `on_failure`.
fn check_on_failure(cx: &Ctxt, kind: &KindSpec, args: &HookArgs) -> Option<bool> {
    const CHOICES: &str = "`on_failure = deny` (fail closed: a hook that fails, times out or panics denies the call) \
                           or `on_failure = allow` (fail open: the call runs as if the hook had allowed it)";
    match (&args.on_failure, kind.governs()) {
        (None, true) => {
            cx.error_spanned_by(
                &args.kind,
                format!(
                    "a `{}` hook must say what its failure decides: a guard that errors, times out or panics either \
                     blocks the call or lets it run\nhelp: add {CHOICES}",
                    kind.name
                ),
            );
            None
        }
        (None, false) => None,
        (Some((key, _)), false) => {
            cx.error_spanned_by(
                key,
                format!(
                    "`on_failure` is only for `before_tool_call` hooks, which decide whether a tool call runs\n\
                     help: remove `on_failure`; what a failing `{}` hook does is fixed by its kind",
                    kind.name
                ),
            );
            None
        }
        (Some((_, value)), true) => {
            let word = match value {
                syn::Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(Ident::to_string),
                _ => None,
            };
            match word.as_deref() {
                Some("deny") => Some(true),
                Some("allow") => Some(false),
                _ => {
                    let written = quote::ToTokens::to_token_stream(value).to_string();
                    let quoted = matches!(value, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(_), .. }));
                    let note = if quoted { "; the value is a bare word, not a string" } else { "" };
                    cx.error_spanned_by(
                        value,
                        format!("unknown `on_failure` value `{written}`{note}\nhelp: write {CHOICES}"),
                    );
                    None
                }
            }
        }
    }
}

fn check_kind(cx: &Ctxt, kind: &Ident) -> Option<&'static KindSpec> {
    let name = kind.to_string();
    if let Some(spec) = KindSpec::find(&name) {
        return Some(spec);
    }
    let suggestion = match KindSpec::nearest(&name) {
        Some(near) => format!("\nhelp: did you mean `{}`?", near.name),
        None => String::new(),
    };
    cx.error_spanned_by(
        kind,
        format!("unknown hook kind `{name}`{suggestion}\nthe hook kinds are: {}", KindSpec::all_names()),
    );
    None
}

/// Rust's strict and reserved keywords: an id names the companion item, so it must be usable as
/// an identifier.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else",
    "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod",
    "move", "mut", "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
    "try", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

fn check_id(cx: &Ctxt, args: &HookArgs) -> Option<Ident> {
    let Some(lit) = &args.id else {
        if args.had_unknown_key {
            return None;
        }
        cx.error_at(args.span, "missing hook id: add `id = \"my_hook\"` (snake_case, unique in the crate)");
        return None;
    };
    let id = lit.value();
    if !is_snake_case(&id) {
        cx.error_spanned_by(
            lit,
            format!(
                "hook id `{id}` is not snake_case\nhelp: use lowercase ASCII letters, digits and underscores, starting with a letter, e.g. `\"{}\"`",
                to_snake_case(&id)
            ),
        );
        return None;
    }
    if KEYWORDS.contains(&id.as_str()) {
        cx.error_spanned_by(
            lit,
            format!("hook id `{id}` is a Rust keyword and cannot name the hook's item\nhelp: choose a descriptive id such as `\"{id}_hook\"`"),
        );
        return None;
    }
    Some(Ident::new(&id, lit.span()))
}

/// Whether `id` is snake_case: lowercase ASCII letters, digits and underscores, starting with a
/// letter (D2).
fn is_snake_case(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_lowercase())
        && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The id as the companion's name when it is a valid id, without reporting anything: what the
/// fallback expansion names its companion.
pub(super) fn usable_id(lit: &LitStr) -> Option<Ident> {
    let id = lit.value();
    (is_snake_case(&id) && !KEYWORDS.contains(&id.as_str())).then(|| Ident::new(&id, lit.span()))
}

/// A snake_case suggestion for a rejected id.
fn to_snake_case(id: &str) -> String {
    let mut out = String::new();
    for c in id.chars() {
        let after_letter = out.ends_with(|last: char| last.is_ascii_lowercase());
        let after_digit = out.ends_with(|last: char| last.is_ascii_digit());
        if c.is_ascii_uppercase() {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_digit() {
            // `To20` reads as two words: `to_20`.
            if after_letter {
                out.push('_');
            }
            out.push(c);
        } else if c.is_ascii_alphanumeric() {
            if after_digit {
                out.push('_');
            }
            out.push(c);
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    let digits: String = trimmed.chars().take_while(|c| c.is_ascii_digit() || *c == '_').collect();
    let rest = trimmed[digits.len()..].trim_matches('_');
    let digits = digits.trim_matches('_');
    match (rest.is_empty(), digits.is_empty()) {
        (true, _) => "my_hook".to_owned(),
        (false, true) => rest.to_owned(),
        // A leading number moves to the end, so `20_messages` becomes `messages_20`.
        (false, false) => format!("{rest}_{digits}"),
    }
}

fn check_shape(cx: &Ctxt, function: &HookFn) {
    let sig = &function.sig;
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned_by(unsafety, "a hook cannot be `unsafe fn`; the runtime calls it from safe code");
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned_by(abi, "a hook cannot declare an ABI; remove `extern`");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned_by(variadic, "a hook cannot be variadic");
    }
    for param in sig.generics.params.iter() {
        if !matches!(param, syn::GenericParam::Lifetime(_)) {
            cx.error_spanned_by(param, "a hook cannot be generic: the runtime calls it with the kind's concrete types");
        }
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        cx.error_spanned_by(where_clause, "a hook cannot have a `where` clause");
    }
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                cx.error_spanned_by(receiver, "a hook is a free function; it cannot take `self`");
            }
            FnArg::Typed(typed) => {
                if contains_impl_trait(&typed.ty) {
                    cx.error_spanned_by(
                        &typed.ty,
                        "a hook parameter cannot be `impl Trait`; write the kind's concrete type",
                    );
                }
            }
        }
    }
}

/// The last path segment of a reference's type: `ThreadState` for `&ThreadState` or
/// `&hooks_runtime::types::ThreadState`.
fn referenced_type_name(ty: &Type) -> Option<String> {
    let Type::Reference(reference) = ty else { return None };
    let Type::Path(path) = &*reference.elem else { return None };
    path.path.segments.last().map(|segment| segment.ident.to_string())
}

/// `ctx` anywhere but last gives one error saying so, not a type error for each shifted
/// parameter.
fn check_context_position(cx: &Ctxt, kind: &KindSpec, function: &HookFn) -> Option<()> {
    if !kind.takes_context() {
        return Some(());
    }
    let typed: Vec<&syn::PatType> = function
        .sig
        .inputs
        .iter()
        .filter_map(|input| if let FnArg::Typed(typed) = input { Some(typed) } else { None })
        .collect();
    // Only with every parameter written: a context in place of a missing parameter is a type
    // error on that parameter, not a misplaced context.
    if typed.len() != kind.params.len() + 1 {
        return Some(());
    }
    let last = typed.len() - 1;
    let misplaced = typed.iter().enumerate().find(|(index, param)| {
        *index < last && referenced_type_name(&param.ty).as_deref() == Some("HookExecutionContext")
    });
    let Some((_, param)) = misplaced else { return Some(()) };
    // The signature in the form the user wrote: a value taken by `&mut` is the in-place form.
    let in_place = typed.iter().any(|param| matches!(&*param.ty, Type::Reference(r) if r.mutability.is_some()));
    let signature = match kind.in_place_signature().filter(|_| in_place) {
        Some(in_place) => format!("{in_place}, returning `()` or `Result<(), HookError>`"),
        None => kind.signature(),
    };
    cx.error_spanned_by(
        param,
        format!(
            "the context parameter goes last\nhelp: move `{}` to the end of the parameter list\nexpected signature: {signature}",
            quote::ToTokens::to_token_stream(param).to_string().replace(" :", ":").replace("& ", "&"),
        ),
    );
    None
}

/// A borrowed return type: rustc would first report a lifetime error on the function, which
/// sends the user the wrong way. A hook gives back owned values.
fn check_borrowed_return(cx: &Ctxt, kind: &KindSpec, function: &HookFn) -> Option<()> {
    let ReturnType::Type(_, ty) = &function.sig.output else { return Some(()) };
    struct Borrows(bool);
    impl<'ast> syn::visit::Visit<'ast> for Borrows {
        fn visit_type_reference(&mut self, reference: &'ast syn::TypeReference) {
            if reference.lifetime.as_ref().is_none_or(|lifetime| lifetime.ident != "static") {
                self.0 = true;
            }
        }
    }
    let mut borrows = Borrows(false);
    syn::visit::Visit::visit_type(&mut borrows, ty);
    if !borrows.0 {
        return Some(());
    }
    let in_place = match kind.in_place_signature() {
        Some(signature) => format!(", or change the value in place: {signature}"),
        None => String::new(),
    };
    cx.error_spanned_by(
        ty,
        format!(
            "{} `{}` hook returns an owned value, not a borrow\nhelp: return {}{in_place}",
            kind.article(),
            kind.name,
            kind.accepted_returns_phrase()
        ),
    );
    None
}

fn check_arity(cx: &Ctxt, kind: &'static KindSpec, function: &HookFn) -> Option<Vec<Type>> {
    let sig = &function.sig;
    let types: Vec<Type> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => Some((*typed.ty).clone()),
            FnArg::Receiver(_) => None,
        })
        .collect();
    let required = kind.params.len();
    let accepted = if kind.takes_context() { required..=required + 1 } else { required..=required };
    if accepted.contains(&types.len()) {
        return Some(types);
    }
    let plural = |n: usize| if n == 1 { format!("{n} parameter") } else { format!("{n} parameters") };
    let expected = if kind.takes_context() {
        format!("{}, or {} with the context", plural(required), required + 1)
    } else {
        plural(required)
    };
    let typed: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|input| if let FnArg::Typed(typed) = input { Some(typed) } else { None })
        .collect();
    // Too many: point at the first extra parameter; too few: at the parameter list.
    let (span, advice): (Span, String) = if types.len() > *accepted.end() {
        let first_extra = &typed[*accepted.end()];
        let last = typed.last().expect("more parameters than accepted");
        let span = first_extra.span().join(last.span()).unwrap_or_else(|| first_extra.span());
        let advice = if kind.takes_context() {
            "remove the extra parameters".to_owned()
        } else {
            "user-scope hooks take only the `&UserState`, no context; remove the extra parameters".to_owned()
        };
        (span, advice)
    } else {
        let state = &kind.params[0];
        let state_type = state.ty.trim_start_matches('&');
        let has_state = types.first().is_some_and(|ty| referenced_type_name(ty).as_deref() == Some(state_type));
        let advice = if !types.is_empty() && !has_state {
            // The parameters written are the ones after the state: the state is what is missing.
            format!("add `{}: {}` as the first parameter", state.name, state.ty)
        } else {
            missing_params_advice(kind, &types)
        };
        (sig.paren_token.span.join(), advice)
    };
    cx.error_at(
        span,
        format!(
            "{} `{}` hook takes {expected}, found {}\nhelp: {advice}\nexpected signature: {}",
            kind.article(),
            kind.name,
            plural(types.len()),
            kind.expected_forms(),
        ),
    );
    None
}

/// Which parameters a hook with too few lacks, found by type rather than position: a
/// `before_store_tool_result` hook written `(state, result: HookToolResult)` lacks `call`, which
/// goes before `result`. `types` starts with the state.
fn missing_params_advice(kind: &KindSpec, types: &[Type]) -> String {
    let written: Vec<String> = types.iter().skip(1).map(core_type).collect();
    let matches = |index: usize| {
        let param = &kind.params[index];
        let value_ty = kind.value.as_ref().filter(|value| value.index == index).map(|value| value.ty);
        let core = core_type_text(param.ty);
        written.iter().any(|ty| *ty == core || value_ty.is_some_and(|value| *ty == core_type_text(value)))
    };
    let present: Vec<bool> = (0..kind.params.len()).map(|index| index == 0 || matches(index)).collect();
    // Every written parameter should account for one present kind parameter; if the types do not
    // line up, the parameters after the last written one are what is missing.
    let by_type = present.iter().filter(|present| **present).count() == types.len();
    let missing: Vec<usize> = if by_type {
        (0..kind.params.len()).filter(|&index| !present[index]).collect()
    } else {
        (types.len()..kind.params.len()).collect()
    };
    let parts: Vec<String> = missing
        .iter()
        .map(|&index| {
            let param = &kind.params[index];
            let mut part = format!("`{}: {}`", param.name, param.ty);
            if let Some(value) = kind.value.as_ref().filter(|value| value.index == index) {
                part.push_str(&format!(" (or, in place, `{}: &mut {}`)", param.name, value.ty));
            }
            let next = (index + 1..kind.params.len()).find(|&later| by_type && present[later]);
            if let Some(next) = next {
                part.push_str(&format!(" before `{}`", kind.params[next].name));
            }
            part
        })
        .collect();
    format!("add {}", parts.join(", "))
}

/// A parameter type as the missing-parameter check compares it: without references, lifetimes or
/// spaces (`&'a mut HookToolResult` is `HookToolResult`).
fn core_type(ty: &Type) -> String {
    let mut ty = ty;
    while let Type::Reference(reference) = ty {
        ty = &reference.elem;
    }
    let mut ty = ty.clone();
    EraseLifetimes.visit_type_mut(&mut ty);
    core_type_text(&quote::ToTokens::to_token_stream(&ty).to_string())
}

fn core_type_text(ty: &str) -> String {
    let text: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    let mut text = text.as_str();
    loop {
        if let Some(rest) = text.strip_prefix("&mut") {
            text = rest;
        } else if let Some(rest) = text.strip_prefix('&') {
            text = rest;
        } else {
            return text.replace("'_", "");
        }
    }
}

fn contains_impl_trait(ty: &Type) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_type(&mut finder, ty);
    finder.0
}

/// Replaces named lifetimes with `'_`: the adapter has no such lifetime in scope, and inference
/// gives the same types.
struct EraseLifetimes;

impl VisitMut for EraseLifetimes {
    fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
        if lifetime.ident != "static" {
            *lifetime = syn::Lifetime::new("'_", lifetime.span());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::to_snake_case;

    #[test]
    fn d2_suggests_a_snake_case_id() {
        assert_eq!(to_snake_case("LimitMessages"), "limit_messages");
        assert_eq!(to_snake_case("LimitTo20Messages"), "limit_to_20_messages");
        assert_eq!(to_snake_case("limit20"), "limit_20");
        assert_eq!(to_snake_case("limit-messages"), "limit_messages");
        assert_eq!(to_snake_case("2fast"), "fast_2");
        assert_eq!(to_snake_case("20_messages"), "messages_20");
        assert_eq!(to_snake_case("!!"), "my_hook");
    }
}
