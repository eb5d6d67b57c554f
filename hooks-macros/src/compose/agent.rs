//! `define_agent! { name: ..., side_a: {...}, side_b: {...}, hooks: [...], parent_hooks: [...] }`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, LitBool, LitStr, Path};

use super::entry::Read;
use super::{expand, keys as key};
use crate::ctxt::Ctxt;
use crate::fields::{FieldReader, Fields, Value, report_repeated_paths};
use crate::private::Private;

const FIELDS: &[&str] = &[
    key::NAME,
    key::SIDE_A,
    key::SIDE_B,
    key::HOOKS,
    key::EXPOSE_AS_TOOL,
    key::TOOL_DESCRIPTION,
    key::PARENT_HOOKS,
    key::CRATE,
];
const SIDE_FIELDS: &[&str] = &[key::PROMPT, key::HUMAN, key::STOP_ON_RESPONSE, key::MAX_STEPS, key::SUBAGENTS];
const SUBAGENT_FIELDS: &[&str] = &[key::AGENT, key::AS, key::OPTIONAL, key::HIDDEN, key::MAX_INSTANCES];
const REQUIREMENT_FIELDS: &[&str] = &[key::HOOK, key::REASON, key::STAGE];

struct AgentInput {
    name: Ident,
    side_a: SideInput,
    side_b: SideInput,
    hooks: Vec<Path>,
    expose_as_tool: bool,
    tool_description: Option<LitStr>,
    parent_hooks: Vec<Requirement>,
    krate: Path,
}

enum ParticipantInput {
    Prompt(Path),
    Human,
}

struct SideInput {
    participant: ParticipantInput,
    stop_on_response: bool,
    max_steps: Option<u32>,
    subagents: Vec<Relationship>,
}

struct Relationship {
    agent: Path,
    name: Option<String>,
    /// The `as` value's tokens, or the agent path's, for errors about the name.
    name_span: proc_macro2::Span,
    optional: bool,
    hidden: bool,
    max_instances: Option<u32>,
}

struct Requirement {
    hook: Path,
    reason: LitStr,
    before_parent: bool,
}

pub(crate) fn define_agent(input: TokenStream) -> TokenStream {
    super::entry::entry(input, "agent", read, expand_agent, fallback)
}

fn read(cx: &Ctxt, fields: Fields) -> Read<AgentInput> {
    let (model, name, krate) = read_model(cx, fields);
    Read { model, name, krate }
}

fn read_model(cx: &Ctxt, fields: Fields) -> (Option<AgentInput>, Option<Ident>, Path) {
    let mut reader = FieldReader::new(cx, "`define_agent!`", fields, FIELDS);
    let name = reader.ident(key::NAME, "support_agent");
    let side_a = reader.object(key::SIDE_A, "{ prompt: my_prompt }").and_then(|side| read_side(cx, side, "`side_a`"));
    let side_b = match reader.object(key::SIDE_B, "{ human: true }") {
        Some(side) => read_side(cx, side, "`side_b`"),
        None if reader.key(key::SIDE_B).is_some() => None,
        None => Some(SideInput {
            participant: ParticipantInput::Human,
            stop_on_response: false,
            max_steps: None,
            subagents: Vec::new(),
        }),
    };
    let hooks = reader.paths(key::HOOKS, "[log_tool_calls]");
    let expose_as_tool = reader.bool(key::EXPOSE_AS_TOOL);
    let tool_description = reader.string(key::TOOL_DESCRIPTION);
    let parent_hooks_key = reader.key(key::PARENT_HOOKS);
    let parent_hooks = match reader.array(key::PARENT_HOOKS, "[{ hook: my_hook, reason: \"...\" }]") {
        Some((_, values)) => values.into_iter().filter_map(|value| read_requirement(cx, value)).collect(),
        None => Vec::new(),
    };
    let krate = reader.path(key::CRATE, "::hooks_runtime").unwrap_or_else(crate::private::default_crate);
    if reader.key(key::NAME).is_none() {
        reader.missing(key::NAME, "my_agent");
    }
    if reader.key(key::SIDE_A).is_none() {
        reader.missing(key::SIDE_A, "{ prompt: my_prompt }");
    }
    // D8: only an agent exposed as a tool can require hooks of its parents.
    if let Some(key) = &parent_hooks_key
        && !expose_as_tool.as_ref().is_some_and(LitBool::value)
    {
        let found = match &expose_as_tool {
            Some(lit) if !lit.value => "`expose_as_tool` is `false`",
            _ => "`expose_as_tool` is not set",
        };
        cx.error_spanned_by(
            key,
            format!(
                "`parent_hooks` needs `expose_as_tool: true`, and {found}\nhelp: only an agent that other agents compose as a tool can require hooks of its parents; add `expose_as_tool: true`"
            ),
        );
    }
    report_repeated_paths(cx, &hooks, |hook| {
        format!("`{hook}` is already listed in this agent's `hooks`; a hook runs once per list, remove this one")
    });
    check_relationship_names(cx, side_a.iter().chain(side_b.iter()).flat_map(|side| side.subagents.iter()));
    if let Some(name) = &name {
        check_not_own_subagent(cx, name, side_a.iter().chain(side_b.iter()).flat_map(|side| side.subagents.iter()));
    }
    let required: Vec<Path> = parent_hooks.iter().map(|r: &Requirement| r.hook.clone()).collect();
    report_repeated_paths(cx, &required, |hook| {
        format!(
            "`{hook}` is already required in this agent's `parent_hooks`; two requirements cannot name the same hook, merge their reasons"
        )
    });
    let (name_read, krate_read) = (name.clone(), krate.clone());
    let input = (|| {
        Some(AgentInput {
            name: name?,
            side_a: side_a?,
            side_b: side_b?,
            hooks,
            expose_as_tool: expose_as_tool.is_some_and(|lit| lit.value),
            tool_description,
            parent_hooks,
            krate,
        })
    })();
    (input, name_read, krate_read)
}

/// The companion of an agent whose fields did not check out: a definition with two people's
/// sides that is never used (the crate does not compile).
fn fallback(name: &Ident, private: &Private) -> TokenStream {
    let name_text = name.to_string();
    let side = quote!(#private::SideDef::new(#private::Participant::Human));
    quote! {
        #[allow(non_camel_case_types, unreachable_pub)]
        pub struct #name {}

        impl #private::Agent for #name {
            const DEF: &'static #private::AgentDef = &#private::AgentDef::new(
                #name_text,
                #private::PackageSignature::new_static("", ""),
                #side,
                #side,
            );
        }
    }
}

fn read_side(cx: &Ctxt, fields: Fields, what: &'static str) -> Option<SideInput> {
    let mut reader = FieldReader::new(cx, what, fields, SIDE_FIELDS);
    let prompt = reader.path(key::PROMPT, "my_prompt");
    let human = reader.bool(key::HUMAN);
    let stop_on_response_key = reader.key(key::STOP_ON_RESPONSE);
    let max_steps_key = reader.key(key::MAX_STEPS);
    let stop_on_response = reader.bool(key::STOP_ON_RESPONSE).is_some_and(|lit| lit.value);
    let max_steps = reader.int(key::MAX_STEPS).map(|(_, steps)| steps);
    let subagents = match reader.array(key::SUBAGENTS, "[{ agent: mail_agent }]") {
        Some((_, values)) => values.into_iter().filter_map(|value| read_relationship(cx, value)).collect(),
        None => Vec::new(),
    };
    let participant = match (prompt, human) {
        (Some(prompt), None) => ParticipantInput::Prompt(prompt),
        (None, Some(human)) if human.value => {
            for key in [&stop_on_response_key, &max_steps_key].into_iter().flatten() {
                cx.error_spanned_by(
                    key,
                    format!("{what}: `{key}` has no effect on a person's side; it applies to a side taken by a prompt"),
                );
            }
            ParticipantInput::Human
        }
        (None, Some(human)) => {
            cx.error_spanned_by(&human, format!("{what}: `human: false` does not say who takes the turns\nhelp: write `prompt: my_prompt` for a model side, or `human: true`"));
            return None;
        }
        (Some(_), Some(human)) => {
            cx.error_spanned_by(
                &human,
                format!("{what} has both `prompt` and `human`; a side is taken by a prompt or by a person, keep one"),
            );
            return None;
        }
        (None, None) => {
            if reader.key(key::PROMPT).is_none() && reader.key(key::HUMAN).is_none() {
                cx.error_at(reader.span(), format!("{what} needs `prompt: my_prompt` or `human: true`"));
            }
            return None;
        }
    };
    Some(SideInput { participant, stop_on_response, max_steps, subagents })
}

fn read_relationship(cx: &Ctxt, value: Value) -> Option<Relationship> {
    let Value::Object(fields) = value else {
        cx.error_at(value.span(), "a subagent is an object: `{ agent: mail_agent, max_instances: 1 }`");
        return None;
    };
    let mut reader = FieldReader::new(cx, "a subagent relationship", fields, SUBAGENT_FIELDS);
    let agent = reader.path(key::AGENT, "mail_agent");
    let name_span = reader
        .value_span(key::AS)
        .or_else(|| agent.as_ref().map(syn::spanned::Spanned::span))
        .unwrap_or_else(proc_macro2::Span::call_site);
    let name = relationship_name(&mut reader);
    let optional = reader.bool(key::OPTIONAL).is_some_and(|lit| lit.value);
    let hidden = reader.bool(key::HIDDEN).is_some_and(|lit| lit.value);
    let max_instances = reader.int(key::MAX_INSTANCES).map(|(_, n)| n);
    if reader.key(key::AGENT).is_none() {
        reader.missing(key::AGENT, "mail_agent");
    }
    Some(Relationship { agent: agent?, name, name_span, optional, hidden, max_instances })
}

/// `as: mailbox` or `as: "mailbox"`.
fn relationship_name(reader: &mut FieldReader<'_>) -> Option<String> {
    reader.name_or_string(key::AS, "mailbox")
}

/// A relationship's name is offered to the model as a tool name and names the relationship
/// at run time: it must be a usable name and unique within the agent.
fn check_relationship_names<'r>(cx: &Ctxt, relationships: impl Iterator<Item = &'r Relationship>) {
    let mut seen: Vec<String> = Vec::new();
    for relationship in relationships {
        let name = match &relationship.name {
            Some(name) => name.clone(),
            None => relationship.agent.segments.last().map(|s| s.ident.to_string()).unwrap_or_default(),
        };
        let usable = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !usable {
            cx.error_at(
                relationship.name_span,
                format!("relationship name `{name}` is not usable as a tool name\nhelp: use ASCII letters, digits, `_` or `-`, e.g. `as: mailbox`"),
            );
        } else if seen.contains(&name) {
            cx.error_at(
                relationship.name_span,
                format!("this agent already has a relationship named `{name}`\nhelp: give one of them another name with `as: ...`"),
            );
        }
        seen.push(name);
    }
}

/// An agent that lists itself (`agent: my_agent` or `agent: self::my_agent` in `my_agent`'s own
/// definition) would be a constant that contains itself, which rustc reports as a query cycle
/// naming none of the user's tokens; this says what it is, at the path.
fn check_not_own_subagent<'r>(cx: &Ctxt, name: &Ident, relationships: impl Iterator<Item = &'r Relationship>) {
    for relationship in relationships {
        let segments: Vec<String> = relationship.agent.segments.iter().map(|s| s.ident.to_string()).collect();
        let own = match segments.as_slice() {
            [only] => only == &name.to_string(),
            [module, last] => module == "self" && last == &name.to_string(),
            _ => false,
        };
        if own && relationship.agent.leading_colon.is_none() {
            cx.error_spanned_by(
                &relationship.agent,
                format!(
                    "agent `{name}` lists itself as a subagent\nhelp: a definition cannot contain itself; define the child as an agent of its own (it may use the same prompt) and list that one"
                ),
            );
        }
    }
}

fn read_requirement(cx: &Ctxt, value: Value) -> Option<Requirement> {
    let Value::Object(fields) = value else {
        cx.error_at(
            value.span(),
            "a parent_hooks requirement is an object: `{ hook: my_hook, reason: \"...\", stage: before_parent }`",
        );
        return None;
    };
    let mut reader = FieldReader::new(cx, "a `parent_hooks` requirement", fields, REQUIREMENT_FIELDS);
    let hook = reader.path(key::HOOK, "mail_context");
    let reason = reader.string(key::REASON);
    let stage = reader.ident(key::STAGE, "before_parent");
    if reader.key(key::HOOK).is_none() {
        reader.missing(key::HOOK, "mail_context");
    }
    // D10: a reason is required and not blank.
    if reader.key(key::REASON).is_none() {
        reader.cx().error_at(
            reader.span(),
            "this `parent_hooks` requirement has no `reason`\nhelp: add `reason: \"...\"`: the explanation shown to whoever composes this agent",
        );
    }
    if let Some(reason) = &reason
        && reason.value().trim().is_empty()
    {
        cx.error_spanned_by(reason, "a `parent_hooks` reason cannot be blank; say why the parent needs this hook");
    }
    let before_parent = match &stage {
        None => false,
        Some(stage) if stage == "before_parent" => true,
        Some(stage) if stage == "after_parent" => false,
        Some(stage) => {
            let text = stage.to_string();
            let nearest = crate::suggest::did_you_mean(&text, ["before_parent", "after_parent"])
                .map(|near| format!("did you mean `{near}`? "))
                .unwrap_or_default();
            cx.error_spanned_by(
                stage,
                format!(
                    "unknown stage `{stage}`\nhelp: {nearest}a stage is `before_parent` or `after_parent` (the default)"
                ),
            );
            false
        }
    };
    Some(Requirement { hook: hook?, reason: reason?, before_parent })
}

/// A side's definition, reading its subagent relationships from the constant `subagents`, and
/// that constant's item.
fn expand_side(private: &Private, side: &SideInput, subagents_const: &Ident) -> (TokenStream, TokenStream) {
    let participant = match &side.participant {
        ParticipantInput::Prompt(path) => {
            let def = expand::prompt_def(private, path);
            quote!(#private::Participant::Prompt(#def))
        }
        ParticipantInput::Human => quote!(#private::Participant::Human),
    };
    let stop_on_response = side.stop_on_response;
    let max_steps = side.max_steps.map(|n| quote!(.with_max_steps(#n)));
    let subagents = side.subagents.iter().map(|relationship| {
        let agent = expand::agent_def(private, &relationship.agent);
        let name = match &relationship.name {
            Some(name) => quote!(#name),
            None => quote!(#agent.name),
        };
        let optional = relationship.optional;
        let hidden = relationship.hidden;
        let max_instances = relationship.max_instances.map(|n| quote!(.with_max_instances(#n)));
        quote! {
            #private::SubagentRelationship::new(#agent, #name)
                .with_optional(#optional)
                .with_hidden(#hidden)
                #max_instances
        }
    });
    let item = quote! {
        const #subagents_const: &[#private::SubagentRelationship] = &[#(#subagents),*];
    };
    let side = quote! {
        #private::SideDef::new(#participant)
            .with_stop_on_response(#stop_on_response)
            #max_steps
            .with_subagents(#subagents_const)
    };
    (item, side)
}

fn expand_agent(input: &AgentInput) -> TokenStream {
    let AgentInput { name, side_a, side_b, hooks, expose_as_tool, tool_description, parent_hooks, krate } = input;
    let private = crate::private::private_path(krate);
    let name_text = name.to_string();
    let (side_a_subagents, side_a) = expand_side(&private, side_a, &format_ident!("__SIDE_A_SUBAGENTS"));
    let (side_b_subagents, side_b) = expand_side(&private, side_b, &format_ident!("__SIDE_B_SUBAGENTS"));
    let hook_defs = hooks.iter().map(|hook| expand::listed_hook(&private, hook));
    let tool_description = tool_description.as_ref().map(|d| quote!(.with_tool_description(#d)));
    let requirements = parent_hooks.iter().map(|requirement| {
        let hook = expand::required_hook(&private, &requirement.hook);
        let reason = &requirement.reason;
        let stage = if requirement.before_parent { quote!(BeforeParent) } else { quote!(AfterParent) };
        quote! {
            #private::ParentHookRequirement::new(#hook, #reason, #private::ParentHookStage::#stage)
        }
    });
    let distinct_hooks = expand::distinct_hooks(&private, hooks, "listed in this agent's `hooks`");
    let required: Vec<Path> = parent_hooks.iter().map(|r| r.hook.clone()).collect();
    let distinct_requirements = expand::distinct_hooks(
        &private,
        &required,
        "required in this agent's `parent_hooks` (two requirements cannot name one hook)",
    );
    // Spanned at the name, so two items of one name in a module are reported there.
    let struct_item = quote::quote_spanned!(name.span()=> pub struct #name {});
    let doc = format!("Agent `{name_text}`, defined with `define_agent!`.");
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types, unreachable_pub)]
        #struct_item

        impl #private::Agent for #name {
            // The lists are constants of their own: a slice written as a constructor's argument
            // would be a temporary, where these live as long as the definition.
            const DEF: &'static #private::AgentDef = {
                const __HOOKS: &[&#private::HookDef] = &[#(#hook_defs),*];
                const __PARENT_HOOKS: &[#private::ParentHookRequirement] = &[#(#requirements),*];
                #side_a_subagents
                #side_b_subagents
                &#private::AgentDef::new(
                    #name_text,
                    #private::PackageSignature::new_static(
                        ::core::env!("CARGO_PKG_NAME"),
                        ::core::env!("CARGO_PKG_VERSION"),
                    ),
                    #side_a,
                    #side_b,
                )
                .with_hooks(__HOOKS)
                .with_expose_as_tool(#expose_as_tool)
                #tool_description
                .with_parent_hooks(__PARENT_HOOKS)
            };
        }

        #distinct_hooks
        #distinct_requirements
    }
}
