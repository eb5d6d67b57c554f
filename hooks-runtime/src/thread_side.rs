//! What a thread offers the code that plugs into it from outside `thread/`: the deciders of
//! the admission pipeline (`governing::admission`) and the lifecycle hooks of a foreign hook
//! format ([`ThreadHooks`]). `thread/` implements [`ThreadSide`]; an adapter (the settings
//! format in `declarative/`) implements [`ThreadHooks`]; neither names the other.

use async_trait::async_trait;
use hooks_core::{HookMessage, HookToolCall, HookToolResult, MessageRecord, Role};
use serde_json::json;

use crate::events::ThreadEvent;

/// The thread a decider or lifecycle hook acts for: its id, its events, its stored history.
#[async_trait]
#[cfg_attr(not(feature = "declarative"), allow(dead_code))]
pub(crate) trait ThreadSide: Send + Sync {
    /// The thread's id.
    fn id(&self) -> &str;
    /// The name of the agent the thread runs now.
    fn agent_name(&self) -> &'static str;
    /// Whether this process created the thread as a subagent's child thread.
    fn is_subagent(&self) -> bool;
    /// Sends `event` to the thread's subscribers.
    fn emit(&self, event: ThreadEvent);
    /// The thread's messages as the store holds them now.
    async fn history(&self) -> Result<Vec<HookMessage>, String>;
}

/// What the lifecycle hooks said of a user message about to be stored.
#[cfg_attr(not(feature = "declarative"), allow(dead_code))]
pub(crate) enum PromptCheck {
    /// Store it; then store this context, if any.
    Pass(Option<String>),
    /// Do not store it, for this reason.
    Blocked(String),
}

/// The lifecycle points a foreign hook format acts at, apart from the admission of a tool call
/// (which its deciders join): the result of a call, a sent user message, a new thread, the end
/// of a turn, a call that starts to wait for a person.
#[async_trait]
pub(crate) trait ThreadHooks: Send + Sync {
    /// For a call that ran: may add to the text of `result` the model reads.
    async fn after_tool_call(&self, thread: &dyn ThreadSide, call: &HookToolCall, result: &mut HookToolResult);
    /// For a user message about to be stored.
    async fn user_prompt(&self, thread: &dyn ThreadSide, record: &MessageRecord) -> PromptCheck;
    /// For a new top-level thread: context to store.
    async fn session_started(&self, thread: &dyn ThreadSide) -> Option<String>;
    /// For a subagent's new child thread: context to store.
    async fn subagent_started(&self, thread: &dyn ThreadSide) -> Option<String>;
    /// For a turn about to end with `reply`: the reason to go on with, if a hook blocks the end.
    async fn stop_continues(&self, thread: &dyn ThreadSide, reply: &str, stop_hook_active: bool) -> Option<String>;
    /// Whether a hook asked the thread's turn to stop; taken, so the turn acts on it once.
    fn stop_requested(&self, thread: &dyn ThreadSide) -> bool;
    /// For a call of `tool` that now waits for a person; observes only.
    async fn notify_waiting(&self, thread: &dyn ThreadSide, tool: &str);
    /// The name a stored message carrying one of these hooks' context is marked with.
    fn context_marker(&self) -> &'static str;
}

/// Appends `context` to the text of `result` that the model reads.
pub(crate) fn add_context(result: &mut HookToolResult, context: &str) {
    let text = if result.is_success() { &mut result.result } else { &mut result.error };
    let text = text.get_or_insert_with(String::new);
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(context);
}

/// A user message carrying hooks' words for the model, marked `marker: event`.
pub(crate) fn context_message(marker: &'static str, event: &'static str, text: String) -> MessageRecord {
    let mut message = MessageRecord::new(Role::User, text);
    message.extra.insert(marker.into(), json!(event));
    message
}
