//! Not public API. Used by code that the macros generate; it may change in any release.

//!
//! It also holds the runtime's internals that the crate root does not re-export: a hook's
//! handler and its future, the linked hooks, and resolved chains.

pub use hooks_core::__private::{
    ActiveContext, Adapter, BLOCKING, BoxedHookFuture, EnabledRelationships, HookHandler, MOVES_VALUE,
    ON_FAILURE_ALLOW, ON_FAILURE_DENY, RegisteredHook, ResolvedHook, chain, first_repeat, handler, hook_def, inventory,
};
pub use hooks_core::{
    Agent, AgentDef, Hook, HookDef, HookLocation, PackageSignature, ParentHookRequirement, ParentHookStage,
    Participant, Prompt, PromptDef, SideDef, SubagentRelationship, ToolDecision,
};

/// A value a by-value hook's adapter can move out of the chain's slot, leaving an empty value
/// that allocates nothing in its place until the hook's answer is moved back.
pub trait TakeValue: Sized {
    /// The empty value left behind.
    fn empty() -> Self;
}

impl<T> TakeValue for Vec<T> {
    #[inline(always)]
    fn empty() -> Self {
        Vec::new()
    }
}

impl TakeValue for hooks_core::MessageRecord {
    #[inline(always)]
    fn empty() -> Self {
        hooks_core::MessageRecord::new(hooks_core::Role::User, String::new())
    }
}

impl TakeValue for hooks_core::MessageUpdate {
    #[inline(always)]
    fn empty() -> Self {
        hooks_core::MessageUpdate::default()
    }
}

impl TakeValue for hooks_core::HookToolResult {
    #[inline(always)]
    fn empty() -> Self {
        hooks_core::HookToolResult::success(String::new())
    }
}

/// Moves a by-value hook's input out of the chain's slot.
#[inline(always)]
pub fn take_value<T: TakeValue>(slot: &mut T) -> T {
    core::mem::replace(slot, T::empty())
}

/// Moves a by-value hook's answer back into the chain's slot. On a failure the slot keeps the
/// empty value, and dispatch restores its snapshot.
#[inline(always)]
pub fn store_moved<T>(slot: &mut T, answer: hooks_core::HookResult<T>) -> hooks_core::HookResult<()> {
    *slot = answer?;
    Ok(())
}

/// Applies a by-value hook's optional replacement (`None` keeps the value).
#[inline(always)]
pub fn store_replacement<T>(slot: &mut T, answer: hooks_core::HookResult<Option<T>>) -> hooks_core::HookResult<()> {
    if let Some(replacement) = answer? {
        *slot = replacement;
    }
    Ok(())
}

/// The signature traits the `#[hook]` adapters call through, one per kind and position.
pub mod signature {
    #![allow(missing_docs, unreachable_pub)]
    use hooks_core::__private::BoxedHookFuture;
    use hooks_core::*;
    hooks_macros::__signature_traits!();
}

pub use crate::definition::GuardHook;

/// A thread hook, which a prompt's or agent's `hooks` may list. `#[hook]` implements it for
/// the 15 thread kinds.
#[diagnostic::on_unimplemented(
    message = "this cannot be listed in `hooks`: it is not a thread hook",
    label = "not a thread hook",
    note = "a `hooks` list takes hooks defined with `#[hook(KIND, id = \"...\")]` for one of the 15 thread kinds, referenced by id",
    note = "user-scope hooks (`user_client_attached`, `user_client_detached`, `user_value_changed`) run for every user without being listed"
)]
pub trait ListableHook: Hook {}

/// A thread hook, which a child's `parent_hooks` may require.
#[diagnostic::on_unimplemented(
    message = "this cannot be required in `parent_hooks`: it is not a thread hook",
    label = "not a thread hook",
    note = "a requirement names a hook defined with `#[hook(KIND, id = \"...\")]` for one of the 15 thread kinds",
    note = "user-scope hooks can never be composed as parent hooks"
)]
pub trait RequirableHook: Hook {}

/// Checks that `T` is a prompt.
#[diagnostic::on_unimplemented(
    message = "this is not a prompt",
    label = "expected a prompt defined with `define_prompt!`",
    note = "a side's `prompt` names a prompt defined with `define_prompt! {{ name: ..., }}`, by its name or path"
)]
pub trait PromptRef: Prompt {}
impl<T: Prompt> PromptRef for T {}

/// Checks that `T` is an agent.
#[diagnostic::on_unimplemented(
    message = "this is not an agent",
    label = "expected an agent defined with `define_agent!`",
    note = "a subagent's `agent` names an agent defined with `define_agent! {{ name: ..., }}`, by its name or path"
)]
pub trait AgentRef: Agent {}
impl<T: Agent> AgentRef for T {}

/// What the name of a hook's *function* means in the type namespace: `#[hook]` emits
/// `type limit = <limit_to_20_messages as ReferencedById>::Function;` beside `fn limit`, so that
/// listing the function instead of the id fails on [`ReferencedById`], whose message names the
/// id. Every use of the alias fails at the alias's own token, so the uses a prompt makes of one
/// path (its definition, the repeated-hook check) are one error, and no impl is suggested.
///
/// Implemented only for an uninhabited type, hidden from diagnostics, so that rustc does not add
/// "this trait has no implementations".
#[diagnostic::on_unimplemented(
    message = "this names the function of hook `{Self}`; a hook is referenced by its id",
    label = "the hook's function, not its id",
    note = "write the hook's id, `{Self}`, here: `#[hook(KIND, id = \"...\")]` names the item prompts and agents list"
)]
pub trait ReferencedById {
    /// Never reached: no hook implements the trait.
    type Function;
}

#[doc(hidden)]
pub enum NotAHook {}

#[diagnostic::do_not_recommend]
impl ReferencedById for NotAHook {
    type Function = NotAHook;
}

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

/// Fails the const evaluation of a list that names one hook twice, reporting `message` where the
/// macro spans the call: at the later path (`#[track_caller]`). A function rather than a
/// `panic!` in each list's check, which would be two macro expansions per path.
#[track_caller]
pub const fn repeated_hook(message: &'static str) {
    panic!("{}", message)
}
