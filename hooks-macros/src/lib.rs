//! Procedural macros of the agent hooks framework. Use them through `hooks-runtime`, which
//! re-exports them with the types their expansion names:
//!
//! - [`macro@hook`]: `#[hook(KIND, id = "...")]` on a function;
//! - [`define_prompt!`]: a prompt with its model, text, tools and hooks;
//! - [`define_agent!`]: an agent with its sides, subagents, hooks and parent-hook requirements.
//!
//! Each macro is parse -> validate -> expand; every error is collected and reported on the
//! user's token, and the original item is always emitted so one mistake yields one error.

mod compose;
mod ctxt;
mod fields;
mod hook;
mod kinds;
mod private;
mod signature;
mod suggest;

use proc_macro::TokenStream;

/// Defines a hook: `#[hook(KIND, id = "snake_case_id")]` on a `fn` or `async fn`.
///
/// The function is emitted unchanged, so it can be called (and unit-tested) directly. Beside it
/// comes an item named by the id, which prompts and agents reference by path and which carries
/// the definition (`<id as Hook>::DEF`), and the hook's registration in the binary's registry.
///
/// - `KIND` is one of the 17 kinds; the parameters after `state` follow the kind (docs/hooks.md's
///   table), the trailing `ctx: &HookExecutionContext` of a thread hook may be left out, and the
///   return type may be wrapped in `Result<_, HookError>`.
/// - A transform kind takes its value in place (`messages: &mut Vec<HookMessage>`, returning `()`
///   or `Result<(), HookError>`: no copy; a failing hook leaves the value as it left it) or by
///   value (`messages: Vec<HookMessage>`, returning the new value: all-or-nothing, at the price
///   of a snapshot). The macro reads the form from the parameter's type.
/// - `id = "..."`: snake_case, unique in the crate (a second one is a compile error) and across
///   the binary (the runtime refuses to start).
/// - `timeout_ms = N`: this hook's timeout, in place of the runtime's default: an `async fn` is
///   cut off at it, a `blocking` sync hook's answer after it is discarded. Nothing can cut off a
///   plain sync hook, so `timeout_ms` on one is a compile error.
/// - `blocking`: a sync hook that blocks its thread (file or network I/O, a lock). On a
///   multi-threaded tokio runtime the worker's other tasks move to another thread before it runs,
///   so other threads keep making progress. A plain sync hook holds its worker while it runs.
/// - `crate = path`: where `hooks_runtime` is, when it is re-exported under another name.
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(filter_messages, id = "keep_last_20")]
/// fn keep_last_20(_state: &ThreadState, messages: &mut Vec<HookMessage>) {
///     let skip = messages.len().saturating_sub(20);
///     messages.drain(..skip);
/// }
///
/// #[hook(after_create_message, id = "append_to_audit_file", blocking)]
/// fn append_to_audit_file(_state: &ThreadState, message: &MessageRecord) -> Result<(), HookError> {
///     let _ = message;
///     // std::fs::OpenOptions::new().append(true).open("audit.log")...
///     Ok(())
/// }
///
/// #[hook(before_store_tool_result, id = "redact_emails", timeout_ms = 200)]
/// async fn redact(_state: &ThreadState, _call: &ToolCallRecord, mut result: HookToolResult) -> HookToolResult {
///     result.result = result.result.map(|text| text.replace("alice@example.com", "[email redacted]"));
///     result
/// }
///
/// #[hook(user_client_attached, id = "announce_client")]
/// async fn announce(user: &UserState) -> Result<(), HookError> {
///     println!("{} connected", user.user_id);
///     Ok(())
/// }
///
/// assert_eq!(<redact_emails as Hook>::DEF.timeout_ms, Some(200));
/// assert!(<append_to_audit_file as Hook>::DEF.blocking);
/// assert_eq!(<announce_client as Hook>::DEF.kind(), HookKind::UserClientAttached);
/// ```
#[proc_macro_attribute]
pub fn hook(args: TokenStream, item: TokenStream) -> TokenStream {
    hook::hook(args.into(), item.into()).into()
}

/// Defines a prompt: `define_prompt! { name: ..., model: "...", prompt: "...", tools: [...], hooks: [...] }`.
///
/// | field | value |
/// |---|---|
/// | `name` (required) | the prompt's name; an item of that name is defined, which sides reference |
/// | `model` (required) | the model's name as the runtime knows it (`.model("name", ...)`) |
/// | `prompt` (required) | the system prompt; `{{argument}}` is replaced by the thread's argument, and `create_thread` refuses a thread that lacks one |
/// | `tool_description` | how the prompt describes itself when offered as a tool |
/// | `tools` | tool names; a name that is an agent of the runtime is a handoff target |
/// | `hooks` | hook ids as paths, in run order; empty or omitted: the agent's hooks apply |
/// | `include_chat` | whether earlier chat goes into requests (default `true`) |
/// | `include_past_tools` | whether earlier tool exchanges go into requests (default `false`) |
/// | `crate` | where `hooks_runtime` is, when it is re-exported under another name |
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(filter_messages, id = "limit_to_20_messages")]
/// fn limit(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
///     let skip = messages.len().saturating_sub(20);
///     messages.into_iter().skip(skip).collect()
/// }
///
/// define_prompt! {
///     name: support_prompt,
///     model: "tool-reasoning",
///     prompt: "You help {{customer}} with their order.",
///     tools: ["lookup_order"],
///     hooks: [limit_to_20_messages],
/// }
///
/// assert_eq!(<support_prompt as Prompt>::DEF.hooks[0].id, "limit_to_20_messages");
/// ```
#[proc_macro]
pub fn define_prompt(input: TokenStream) -> TokenStream {
    compose::define_prompt(input.into()).into()
}

/// Defines an agent: `define_agent! { name: ..., side_a: { prompt: ... }, side_b: { human: true }, ... }`.
///
/// | field | value |
/// |---|---|
/// | `name` (required) | the agent's name; an item of that name is defined, which relationships reference |
/// | `side_a` (required), `side_b` (default `{ human: true }`) | `{ prompt: p }` or `{ human: true }`, with `stop_on_response: bool`, `max_steps: N` (prompt sides) and `subagents: [...]` |
/// | a subagent | `{ agent: path, as: name, optional: bool, hidden: bool, max_instances: N }`; `as` defaults to the agent's name |
/// | `hooks` | the agent's hook ids as paths: the fallback when the active prompt lists none, and at rest |
/// | `expose_as_tool` | whether other agents may compose this one; required for `parent_hooks` |
/// | `tool_description` | how the agent describes itself as a tool |
/// | `parent_hooks` | `[{ hook: path, reason: "...", stage: before_parent \| after_parent }]`: hooks this agent requires of any parent that composes it (`stage` defaults to `after_parent`) |
/// | `crate` | where `hooks_runtime` is, when it is re-exported under another name |
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(after_system_message, id = "mail_context")]
/// async fn mail_context(state: &ThreadState, system: &str) -> Option<String> {
///     let summary = state.get_value("mail.summary").await?;
///     Some(format!("{system}\n\nMailbox: {summary}"))
/// }
///
/// define_prompt! { name: mail_prompt, model: "tool-reasoning", prompt: "You read the mailbox." }
/// define_prompt! { name: coordinator_prompt, model: "tool-reasoning", prompt: "You coordinate." }
///
/// define_agent! {
///     name: mail_agent,
///     expose_as_tool: true,
///     tool_description: "Reads and summarizes the mailbox.",
///     parent_hooks: [{ hook: mail_context, reason: "Shows newly synchronized mail to the coordinator.", stage: before_parent }],
///     side_a: { prompt: mail_prompt },
///     side_b: { human: true },
/// }
///
/// define_agent! {
///     name: coordinator,
///     side_a: { prompt: coordinator_prompt, subagents: [{ agent: mail_agent, max_instances: 1 }] },
///     side_b: { human: true },
/// }
///
/// let relationship = &<coordinator as Agent>::DEF.side_a.subagents[0];
/// assert_eq!(relationship.name, "mail_agent");
/// ```
#[proc_macro]
pub fn define_agent(input: TokenStream) -> TokenStream {
    compose::define_agent(input.into()).into()
}

/// Emits the signature traits of every kind. Not public API: `hooks_runtime::__private` calls it
/// once.
#[doc(hidden)]
#[proc_macro]
pub fn __signature_traits(input: TokenStream) -> TokenStream {
    let _ = input;
    signature::signature_traits().into()
}
