//! `define_prompt!` and `define_agent!`: fields parsed into a model, validated, expanded into a
//! const-built definition behind a companion item named by the `name`.
//!
//! This module only declares its children and re-exports the two entry points; what they share
//! lives in `entry`, `expand` and `keys`.

mod agent;
mod entry;
mod expand;
mod keys;
mod prompt;

pub(crate) use agent::define_agent;
pub(crate) use prompt::define_prompt;

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
