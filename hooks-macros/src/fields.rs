//! The `key: value, ...` syntax of `define_prompt!` and `define_agent!`, parsed into a small tree
//! that keeps every token for error spans, and a reader that reports unknown, duplicated,
//! missing and mistyped fields.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Ident, Lit, LitBool, LitInt, LitStr, Path, Token, braced, bracketed};

use crate::ctxt::Ctxt;

/// One value: a literal, a path, `[values]` or `{ fields }`.
pub(crate) enum Value {
    Lit(Lit),
    Path(Path),
    Array(Span, Vec<Value>),
    Object(Fields),
}

impl Value {
    pub(crate) fn span(&self) -> Span {
        match self {
            Value::Lit(lit) => lit.span(),
            Value::Path(path) => path.span(),
            Value::Array(span, _) => *span,
            Value::Object(fields) => fields.span,
        }
    }
}

impl Parse for Value {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.peek(Lit) {
            Ok(Value::Lit(input.parse()?))
        } else if input.peek(syn::token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let values = content.parse_terminated(Value::parse, Token![,])?;
            Ok(Value::Array(bracket.span.join(), values.into_iter().collect()))
        } else if input.peek(syn::token::Brace) {
            let content;
            let brace = braced!(content in input);
            let mut fields: Fields = content.parse()?;
            fields.span = brace.span.join();
            Ok(Value::Object(fields))
        } else {
            input.parse().map(Value::Path).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected a value: a string, a number, `true`/`false`, a name, `[...]` or `{...}`",
                )
            })
        }
    }
}

/// `key: value` pairs.
pub(crate) struct Fields {
    pub(crate) span: Span,
    pub(crate) entries: Vec<(Ident, Value)>,
}

impl Parse for Fields {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let span = input.span();
        let mut entries = Vec::new();
        while !input.is_empty() {
            // `as` and `crate` are keywords; accept any identifier as a key.
            let key = Ident::parse_any(input)?;
            input.parse::<Token![:]>().map_err(|e| syn::Error::new(e.span(), format!("expected `:` after `{key}`")))?;
            let value: Value = input.parse()?;
            entries.push((key, value));
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(Fields { span, entries })
    }
}

/// Reads the fields of one object, reporting every mistake to the context.
pub(crate) struct FieldReader<'a> {
    cx: &'a Ctxt,
    what: &'static str,
    span: Span,
    entries: Vec<(Ident, Option<Value>)>,
    /// Fields suggested for misspelt keys: their absence is not reported a second time.
    suggested: Vec<&'static str>,
    /// The keys this object may have, and the ones a reader asked for: a known key that is never
    /// asked for would be accepted and silently ignored (see `UNREAD_KEYS`).
    #[cfg(test)]
    known: &'static [&'static str],
    #[cfg(test)]
    asked: Vec<&'static str>,
}

impl<'a> FieldReader<'a> {
    /// Checks keys against `known` (unknown: error with a suggestion; repeated: error on the
    /// second).
    pub(crate) fn new(cx: &'a Ctxt, what: &'static str, fields: Fields, known: &'static [&'static str]) -> Self {
        let mut entries: Vec<(Ident, Option<Value>)> = Vec::new();
        let mut suggested = Vec::new();
        for (key, value) in fields.entries {
            let name = key.to_string();
            if !known.contains(&name.as_str()) {
                let nearest = crate::suggest::did_you_mean(&name, known.iter().copied());
                suggested.extend(nearest);
                let hint = nearest.map(|k| format!("\nhelp: did you mean `{k}`?")).unwrap_or_default();
                let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                cx.error_spanned_by(&key, format!("unknown field `{name}` in {what}{hint}\nthe fields are: {list}"));
                continue;
            }
            if entries.iter().any(|(seen, _)| *seen == key) {
                cx.error_spanned_by(&key, format!("`{name}` is set more than once in {what}; keep one"));
                continue;
            }
            entries.push((key, Some(value)));
        }
        FieldReader {
            cx,
            what,
            span: fields.span,
            entries,
            suggested,
            #[cfg(test)]
            known,
            #[cfg(test)]
            asked: Vec::new(),
        }
    }

    pub(crate) fn cx(&self) -> &'a Ctxt {
        self.cx
    }

    /// The span of the whole object, for "missing field" errors.
    pub(crate) fn span(&self) -> Span {
        self.span
    }

    /// The span of a present field's value.
    pub(crate) fn value_span(&self, key: &str) -> Option<Span> {
        self.entries.iter().find(|(k, _)| k == key).and_then(|(_, value)| value.as_ref().map(Value::span))
    }

    /// The key token of a present field.
    pub(crate) fn key(&self, key: &str) -> Option<Ident> {
        self.entries.iter().find(|(k, _)| k == key).map(|(k, _)| k.clone())
    }

    fn take(&mut self, key: &'static str) -> Option<(Ident, Value)> {
        #[cfg(test)]
        self.asked.push(key);
        let entry = self.entries.iter_mut().find(|(k, _)| k == key)?;
        entry.1.take().map(|value| (entry.0.clone(), value))
    }

    /// Reports a missing required field.
    pub(crate) fn missing(&self, key: &str, example: &str) {
        if self.suggested.contains(&key) {
            return;
        }
        self.cx.error_at(self.span, format!("{} is missing `{key}`: add `{key}: {example}`", self.what));
    }

    fn mistyped(&self, key: &Ident, value: &Value, expected: impl std::fmt::Display) {
        self.cx.error_at(value.span(), format!("`{key}` expects {expected}"));
    }

    /// The value of `key` as `found` takes it; a value of another type is an error saying that
    /// the key expects `expected` (formatted only then).
    fn typed<T>(
        &mut self,
        key: &'static str,
        expected: std::fmt::Arguments<'_>,
        found: impl FnOnce(Value) -> Result<T, Value>,
    ) -> Option<T> {
        let (k, value) = self.take(key)?;
        found(value).map_err(|other| self.mistyped(&k, &other, expected)).ok()
    }

    pub(crate) fn ident(&mut self, key: &'static str, example: &str) -> Option<Ident> {
        self.typed(key, format_args!("a plain name, e.g. `{key}: {example}`"), |value| match value {
            Value::Path(path) => path.get_ident().cloned().ok_or(Value::Path(path)),
            other => Err(other),
        })
    }

    /// A plain name or a string literal: `as: mailbox` or `as: "mailbox"`.
    pub(crate) fn name_or_string(&mut self, key: &'static str, example: &str) -> Option<String> {
        self.typed(key, format_args!("a name or a string, e.g. `{key}: {example}`"), |value| match value {
            Value::Lit(Lit::Str(lit)) => Ok(lit.value()),
            Value::Path(path) => path.get_ident().map(Ident::to_string).ok_or(Value::Path(path)),
            other => Err(other),
        })
    }

    pub(crate) fn path(&mut self, key: &'static str, example: &str) -> Option<Path> {
        self.typed(key, format_args!("a name or path, e.g. `{key}: {example}`"), |value| match value {
            Value::Path(path) => Ok(path),
            other => Err(other),
        })
    }

    pub(crate) fn string(&mut self, key: &'static str) -> Option<LitStr> {
        self.typed(key, format_args!("a string literal, e.g. `{key}: \"...\"`"), |value| match value {
            Value::Lit(Lit::Str(lit)) => Ok(lit),
            other => Err(other),
        })
    }

    pub(crate) fn bool(&mut self, key: &'static str) -> Option<LitBool> {
        self.typed(key, format_args!("`true` or `false`, e.g. `{key}: true`"), |value| match value {
            Value::Lit(Lit::Bool(lit)) => Ok(lit),
            other => Err(other),
        })
    }

    pub(crate) fn int(&mut self, key: &'static str) -> Option<(LitInt, u32)> {
        let lit = self.typed(key, format_args!("a whole number, e.g. `{key}: 6`"), |value| match value {
            Value::Lit(Lit::Int(lit)) => Ok(lit),
            other => Err(other),
        })?;
        match lit.base10_parse::<u32>() {
            Ok(number) if number > 0 => Some((lit, number)),
            _ => {
                self.cx.error_spanned_by(&lit, format!("`{key}` must be a whole number above 0"));
                None
            }
        }
    }

    /// The list and its key's token (for errors about the list as a whole).
    pub(crate) fn array(&mut self, key: &'static str, example: &str) -> Option<(Ident, Vec<Value>)> {
        let values =
            self.typed(key, format_args!("a list in brackets, e.g. `{key}: {example}`"), |value| match value {
                Value::Array(_, values) => Ok(values),
                other => Err(other),
            })?;
        Some((self.key(key)?, values))
    }

    pub(crate) fn object(&mut self, key: &'static str, example: &str) -> Option<Fields> {
        self.typed(key, format_args!("an object in braces, e.g. `{key}: {example}`"), |value| match value {
            Value::Object(fields) => Ok(fields),
            other => Err(other),
        })
    }

    /// `[a, b::c]` as paths, each element checked.
    pub(crate) fn paths(&mut self, key: &'static str, example: &str) -> Vec<Path> {
        let Some((k, values)) = self.array(key, example) else { return Vec::new() };
        values
            .into_iter()
            .filter_map(|value| match value {
                Value::Path(path) => Some(path),
                Value::Lit(Lit::Str(lit)) => {
                    self.cx.error_spanned_by(
                        &lit,
                        format!(
                            "`{k}` takes names or paths, not strings: write `{}` without quotes\nhelp: hooks, prompts and agents are referenced by path, so the compiler checks each one",
                            lit.value()
                        ),
                    );
                    None
                }
                other => {
                    self.mistyped(&k, &other, format_args!("a list of names or paths, e.g. `{key}: {example}`"));
                    None
                }
            })
            .collect()
    }

    /// `["a", "b"]` as string literals.
    pub(crate) fn strings(&mut self, key: &'static str, example: &str) -> Vec<LitStr> {
        let Some((k, values)) = self.array(key, example) else { return Vec::new() };
        values
            .into_iter()
            .filter_map(|value| match value {
                Value::Lit(Lit::Str(lit)) => Some(lit),
                other => {
                    self.mistyped(&k, &other, format_args!("a list of string literals, e.g. `{key}: {example}`"));
                    None
                }
            })
            .collect()
    }
}

#[cfg(test)]
thread_local! {
    /// Known keys that a reader dropped without asking for, as `what: key`.
    pub(crate) static UNREAD_KEYS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[cfg(test)]
impl Drop for FieldReader<'_> {
    fn drop(&mut self) {
        let unread = self.known.iter().filter(|key| !self.asked.contains(key));
        let unread: Vec<String> = unread.map(|key| format!("{}: {key}", self.what)).collect();
        UNREAD_KEYS.with(|keys| keys.borrow_mut().extend(unread));
    }
}

/// Reports a path listed twice, on the second occurrence; returns the paths with distinct text.
pub(crate) fn report_repeated_paths(cx: &Ctxt, paths: &[Path], message: impl Fn(&str) -> String) {
    for (index, path) in paths.iter().enumerate() {
        let text = path_text(path);
        if paths[..index].iter().any(|earlier| path_text(earlier) == text) {
            cx.error_spanned_by(path, message(&text));
        }
    }
}

/// A path as written, without spaces: `mail_pkg::mail_context`.
pub(crate) fn path_text(path: &Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}
