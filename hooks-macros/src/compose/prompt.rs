//! `define_prompt! { name: ..., model: "...", prompt: "...", tools: [...], hooks: [...] }`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, LitBool, LitStr, Path};

use super::expand;
use crate::ctxt::Ctxt;
use crate::fields::{FieldReader, Fields, report_repeated_paths};

const FIELDS: &[&str] =
    &["name", "tool_description", "model", "prompt", "tools", "hooks", "include_chat", "include_past_tools", "crate"];

struct PromptInput {
    name: Ident,
    tool_description: Option<LitStr>,
    model: LitStr,
    prompt: LitStr,
    tools: Vec<LitStr>,
    hooks: Vec<Path>,
    include_chat: Option<LitBool>,
    include_past_tools: Option<LitBool>,
    krate: Path,
}

pub(crate) fn define_prompt(input: TokenStream) -> TokenStream {
    let mut fields: Fields = match syn::parse2(input) {
        Ok(fields) => fields,
        Err(error) => return error.into_compile_error(),
    };
    // A missing top-level field is reported on the whole invocation.
    fields.span = proc_macro2::Span::call_site();
    let cx = Ctxt::new();
    let prompt = read(&cx, fields);
    match (cx.check(), prompt) {
        (Ok(()), Some(prompt)) => expand_prompt(&prompt),
        (Err(error), _) => error.into_compile_error(),
        (Ok(()), None) => unreachable!("a missing prompt field is always reported"),
    }
}

fn read(cx: &Ctxt, fields: Fields) -> Option<PromptInput> {
    let mut reader = FieldReader::new(cx, "`define_prompt!`", fields, FIELDS);
    let name = reader.ident("name", "duplicate_finder");
    let tool_description = reader.string("tool_description");
    let model = reader.string("model");
    let prompt = reader.string("prompt");
    let tools = reader.strings("tools", "[\"get_github_issue\"]");
    let hooks = reader.paths("hooks", "[redact_emails]");
    let include_chat = reader.bool("include_chat");
    let include_past_tools = reader.bool("include_past_tools");
    let krate = reader.path("crate", "::hooks_runtime").unwrap_or_else(|| syn::parse_quote!(::hooks_runtime));
    if name.is_none() && reader.key("name").is_none() {
        reader.missing("name", "my_prompt");
    }
    if model.is_none() && reader.key("model").is_none() {
        reader.missing("model", "\"model-name\"");
    }
    if prompt.is_none() && reader.key("prompt").is_none() {
        reader.missing("prompt", "\"You are ...\"");
    }
    report_repeated_paths(cx, &hooks, |hook| {
        format!("`{hook}` is already listed in this prompt's `hooks`; a hook runs once per list, remove this one")
    });
    Some(PromptInput {
        name: name?,
        tool_description,
        model: model?,
        prompt: prompt?,
        tools,
        hooks,
        include_chat,
        include_past_tools,
        krate,
    })
}

fn expand_prompt(input: &PromptInput) -> TokenStream {
    let PromptInput { name, tool_description, model, prompt, tools, hooks, include_chat, include_past_tools, krate } =
        input;
    let private = quote!(#krate::__private);
    let name_text = name.to_string();
    let tool_description = expand::option(tool_description.as_ref().map(|d| quote!(#d)));
    let include_chat = include_chat.as_ref().is_none_or(LitBool::value);
    let include_past_tools = include_past_tools.as_ref().is_some_and(LitBool::value);
    let hook_defs = hooks.iter().map(|hook| expand::listed_hook(&private, hook));
    let distinct = expand::distinct_hooks(&private, hooks, "listed in this prompt's `hooks`");
    // Spanned at the name, so two items of one name in a module are reported there.
    let struct_item = quote::quote_spanned!(name.span()=> pub struct #name {});
    let doc = format!("Prompt `{name_text}`, defined with `define_prompt!`.");
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types, unreachable_pub)]
        #struct_item

        impl #private::Prompt for #name {
            const DEF: &'static #private::PromptDef = &#private::PromptDef {
                name: #name_text,
                tool_description: #tool_description,
                model: #model,
                prompt: #prompt,
                tools: &[#(#tools),*],
                hooks: &[#(#hook_defs),*],
                include_chat: #include_chat,
                include_past_tools: #include_past_tools,
            };
        }

        #distinct
    }
}
