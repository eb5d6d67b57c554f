//! Not public API. Used by code that the macros generate; it may change in any release.

pub use hooks_core::inventory;
pub use hooks_core::{
    Agent, AgentDef, Hook, HookDef, HookFuture, HookHandler, HookLocation, PackageSignature, ParentHookRequirement,
    ParentHookStage, Participant, Prompt, PromptDef, RegisteredHook, SideDef, SubagentRelationship,
};

/// The signature traits the `#[hook]` adapters call through, one per kind and position.
pub mod signature {
    #![allow(missing_docs, unreachable_pub)]
    use hooks_core::*;
    hooks_macros::__signature_traits!();
}

/// A thread hook, which a prompt's or agent's `hooks` may list. `#[hook]` implements it for
/// the 14 thread kinds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be listed in `hooks`: it is not a thread hook",
    label = "not a thread hook",
    note = "a `hooks` list takes hooks defined with `#[hook(KIND, id = \"...\")]` for one of the 14 thread kinds, referenced by id",
    note = "user-scope hooks (`user_client_attached`, `user_client_detached`, `user_value_changed`) run for every user without being listed"
)]
pub trait ListableHook: Hook {}

/// A thread hook, which a child's `parent_hooks` may require.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be required in `parent_hooks`: it is not a thread hook",
    label = "not a thread hook",
    note = "a requirement names a hook defined with `#[hook(KIND, id = \"...\")]` for one of the 14 thread kinds",
    note = "user-scope hooks can never be composed as parent hooks"
)]
pub trait RequirableHook: Hook {}

/// Checks that `T` is a prompt.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a prompt",
    label = "expected a prompt defined with `define_prompt!`",
    note = "a side's `prompt` names a prompt defined with `define_prompt! {{ name: ..., }}`, by its name or path"
)]
pub trait PromptRef: Prompt {}
impl<T: Prompt> PromptRef for T {}

/// Checks that `T` is an agent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an agent",
    label = "expected an agent defined with `define_agent!`",
    note = "a subagent's `agent` names an agent defined with `define_agent! {{ name: ..., }}`, by its name or path"
)]
pub trait AgentRef: Agent {}
impl<T: Agent> AgentRef for T {}

/// The definition of a hook listed in `hooks`.
pub const fn listed_hook<T: ListableHook>() -> &'static HookDef {
    T::DEF
}

/// The definition of a hook required in `parent_hooks`.
pub const fn required_hook<T: RequirableHook>() -> &'static HookDef {
    T::DEF
}

/// The definition of a prompt a side names.
pub const fn prompt_def<T: PromptRef>() -> &'static PromptDef {
    T::DEF
}

/// The definition of an agent a relationship names.
pub const fn agent_def<T: AgentRef>() -> &'static AgentDef {
    T::DEF
}

/// Whether two definitions are one hook: the same id and location.
pub const fn same_hook(a: &HookDef, b: &HookDef) -> bool {
    str_eq(a.id, b.id) && str_eq(a.location.module_path, b.location.module_path) && a.location.line == b.location.line
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}
