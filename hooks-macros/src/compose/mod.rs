//! `define_prompt!` and `define_agent!`: fields parsed into a model, validated, expanded into a
//! const-built definition behind a companion item named by the `name`.

mod agent;
mod expand;
mod keys;
mod prompt;

use proc_macro2::TokenStream;
use syn::{Ident, Path};

use crate::ctxt::Ctxt;
use crate::fields::Fields;
use crate::private::Private;

pub(crate) use agent::define_agent;
pub(crate) use prompt::define_prompt;

/// What reading a macro's fields gave: the model when every field checked out, and the name and
/// crate path that the fallback needs when one did not.
struct Read<T> {
    model: Option<T>,
    name: Option<Ident>,
    krate: Path,
}

/// The one entry of both compose macros: parse the fields, read them into a model, expand it.
/// On any error the companion item is still emitted when the name was read, with a stub
/// definition from `fallback`, so a side or relationship that names the broken item gets no
/// second error of its own (thiserror's `fallback.rs`).
fn entry<T>(
    input: TokenStream,
    what: &str,
    read: impl FnOnce(&Ctxt, Fields) -> Read<T>,
    expand: impl FnOnce(&T) -> TokenStream,
    fallback: impl FnOnce(&Ident, &Private) -> TokenStream,
) -> TokenStream {
    let mut fields: Fields = match syn::parse2(input) {
        Ok(fields) => fields,
        Err(error) => return crate::ctxt::into_compile_errors(error),
    };
    // A missing top-level field is reported on the whole invocation.
    fields.span = proc_macro2::Span::call_site();
    let cx = Ctxt::new();
    let read = read(&cx, fields);
    match (cx.check(), read.model) {
        (Ok(()), Some(model)) => expand(&model),
        (Err(error), _) => {
            let stub = read.name.map(|name| fallback(&name, &crate::private::private_path(&read.krate)));
            let error = crate::ctxt::into_compile_errors(error);
            quote::quote!(#stub #error)
        }
        (Ok(()), None) => unreachable!("a missing {what} field is always reported"),
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use crate::fields::UNREAD_KEYS;

    /// Every key in a `FIELDS` list is read: a key listed but never read would be accepted and
    /// then ignored. Each macro reads an input with every field of every object set.
    #[test]
    fn every_listed_key_is_read() {
        UNREAD_KEYS.with(|keys| keys.borrow_mut().clear());
        super::define_prompt(quote! {
            name: p, tool_description: "d", model: "m", prompt: "t", tools: ["a"], hooks: [h],
            include_chat: true, include_past_tools: false, crate: ::hooks_runtime,
        });
        super::define_agent(quote! {
            name: a,
            side_a: {
                prompt: p, stop_on_response: true, max_steps: 2,
                subagents: [{ agent: c, as: child, optional: true, hidden: false, max_instances: 1 }],
            },
            side_b: { human: true },
            hooks: [h], expose_as_tool: true, tool_description: "d",
            parent_hooks: [{ hook: h, reason: "r", stage: before_parent }],
            crate: ::hooks_runtime,
        });
        let unread = UNREAD_KEYS.with(|keys| keys.borrow().clone());
        assert!(unread.is_empty(), "listed but never read: {unread:?}");
    }
}
