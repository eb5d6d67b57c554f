//! `define_prompt! { name: ..., model: "...", prompt: "...", tools: [...], hooks: [...] }`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Ident, LitBool, LitStr, Path};

use super::entry::Read;
use super::{expand, keys as key};
use crate::ctxt::Ctxt;
use crate::fields::{FieldReader, Fields, report_repeated_paths};
use crate::private::Private;

const FIELDS: &[&str] = &[
    key::NAME,
    key::TOOL_DESCRIPTION,
    key::MODEL,
    key::PROMPT,
    key::TOOLS,
    key::HOOKS,
    key::INCLUDE_CHAT,
    key::INCLUDE_PAST_TOOLS,
    key::CRATE,
];

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
    super::entry::entry(input, "prompt", read, expand_prompt, fallback)
}

fn read(cx: &Ctxt, fields: Fields) -> Read<PromptInput> {
    let (model, name, krate) = read_model(cx, fields);
    Read { model, name, krate }
}

fn read_model(cx: &Ctxt, fields: Fields) -> (Option<PromptInput>, Option<Ident>, Path) {
    let mut reader = FieldReader::new(cx, "`define_prompt!`", fields, FIELDS);
    let name = reader.ident(key::NAME, "duplicate_finder");
    let tool_description = reader.string(key::TOOL_DESCRIPTION);
    let model = reader.string(key::MODEL);
    let prompt = reader.string(key::PROMPT);
    let tools = reader.strings(key::TOOLS, "[\"get_github_issue\"]");
    let hooks = reader.paths(key::HOOKS, "[redact_emails]");
    let include_chat = reader.bool(key::INCLUDE_CHAT);
    let include_past_tools = reader.bool(key::INCLUDE_PAST_TOOLS);
    let krate = reader.path(key::CRATE, "::hooks_runtime").unwrap_or_else(crate::private::default_crate);
    if name.is_none() && reader.key(key::NAME).is_none() {
        reader.missing(key::NAME, "my_prompt");
    }
    if model.is_none() && reader.key(key::MODEL).is_none() {
        reader.missing(key::MODEL, "\"model-name\"");
    }
    if prompt.is_none() && reader.key(key::PROMPT).is_none() {
        reader.missing(key::PROMPT, "\"You are ...\"");
    }
    report_repeated_paths(cx, &hooks, |hook| {
        format!("`{hook}` is already listed in this prompt's `hooks`; a hook runs once per list, remove this one")
    });
    let (name_read, krate_read) = (name.clone(), krate.clone());
    let input = (|| {
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
    })();
    (input, name_read, krate_read)
}

/// The companion of a prompt whose fields did not check out: an empty definition that is never
/// used (the crate does not compile).
fn fallback(name: &Ident, private: &Private) -> TokenStream {
    let name_text = name.to_string();
    quote! {
        #[allow(non_camel_case_types, unreachable_pub)]
        pub struct #name {}

        impl #private::Prompt for #name {
            const DEF: &'static #private::PromptDef = &#private::PromptDef::new(#name_text, "", "");
        }
    }
}

fn expand_prompt(input: &PromptInput) -> TokenStream {
    let PromptInput { name, tool_description, model, prompt, tools, hooks, include_chat, include_past_tools, krate } =
        input;
    let private = crate::private::private_path(krate);
    let name_text = name.to_string();
    let tool_description = tool_description.as_ref().map(|d| quote!(.with_tool_description(#d)));
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
            // The lists are constants of their own: a slice written as a constructor's argument
            // would be a temporary, where these live as long as the definition.
            const DEF: &'static #private::PromptDef = {
                const __TOOLS: &[&str] = &[#(#tools),*];
                const __HOOKS: &[&#private::HookDef] = &[#(#hook_defs),*];
                &#private::PromptDef::new(#name_text, #model, #prompt)
                    #tool_description
                    .with_tools(__TOOLS)
                    .with_hooks(__HOOKS)
                    .with_include_chat(#include_chat)
                    .with_include_past_tools(#include_past_tools)
            };
        }

        #distinct
    }
}
