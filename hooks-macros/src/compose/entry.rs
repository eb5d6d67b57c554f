//! What `define_prompt!` and `define_agent!` share: the entry that parses, reads and expands
//! their fields, with the fallback on error.

use proc_macro2::TokenStream;
use syn::{Ident, Path};

use crate::ctxt::Ctxt;
use crate::fields::Fields;
use crate::private::Private;

/// What reading a macro's fields gave: the model when every field checked out, and the name and
/// crate path that the fallback needs when one did not.
pub(super) struct Read<T> {
    pub(super) model: Option<T>,
    pub(super) name: Option<Ident>,
    pub(super) krate: Path,
}

/// The one entry of both compose macros: parse the fields, read them into a model, expand it.
/// On any error the companion item is still emitted when the name was read, with a stub
/// definition from `fallback`, so a side or relationship that names the broken item gets no
/// second error of its own (thiserror's `fallback.rs`).
pub(super) fn entry<T>(
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
