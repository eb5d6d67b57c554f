//! Where lifecycle hooks plugged in from outside (`thread_side::ThreadHooks`, such as a
//! settings file's) act on a thread, and what the thread offers them (`ThreadSide`). Nothing
//! here names a hook format; without such hooks every function lets everything through.

use std::future::Future;

use async_trait::async_trait;
use hooks_core::{HookMessage, HookToolCall, HookToolResult, MessageRecord, ThreadState};

use super::ThreadShared;
use crate::events::ThreadEvent;
pub(crate) use crate::thread_side::{PromptCheck, add_context};
use crate::thread_side::{ThreadHooks, ThreadSide};

#[async_trait]
impl ThreadSide for ThreadShared {
    fn id(&self) -> &str {
        &self.id
    }

    fn agent_name(&self) -> &'static str {
        self.agent.current().def.name
    }

    fn is_subagent(&self) -> bool {
        ThreadShared::is_subagent(self)
    }

    fn emit(&self, event: ThreadEvent) {
        self.events.emit(event);
    }

    async fn history(&self) -> Result<Vec<HookMessage>, String> {
        self.runtime.store.messages(&self.id).await.map_err(|error| error.to_string())
    }
}

fn hooks(shared: &ThreadShared) -> Option<&dyn ThreadHooks> {
    shared.runtime.registries.thread_hooks()
}

/// For a call that ran: the hooks may add to the text of `result` the model reads.
pub(crate) async fn after_tool_call(shared: &ThreadShared, call: &HookToolCall, result: &mut HookToolResult) {
    if let Some(hooks) = hooks(shared) {
        hooks.after_tool_call(shared, call, result).await;
    }
}

/// For a user message about to be stored.
pub(crate) async fn user_prompt(shared: &ThreadShared, record: &MessageRecord) -> PromptCheck {
    match hooks(shared) {
        Some(hooks) => hooks.user_prompt(shared, record).await,
        None => PromptCheck::Pass(None),
    }
}

/// For a new top-level thread: context to store.
pub(crate) async fn session_started(shared: &ThreadShared) -> Option<String> {
    hooks(shared)?.session_started(shared).await
}

/// For a subagent's new child thread: context to store.
pub(crate) async fn subagent_started(shared: &ThreadShared) -> Option<String> {
    hooks(shared)?.subagent_started(shared).await
}

/// For a turn about to end with `reply`: the reason to go on with, if a hook blocks the end.
pub(crate) async fn stop_continues(shared: &ThreadShared, reply: &str, stop_hook_active: bool) -> Option<String> {
    hooks(shared)?.stop_continues(shared, reply, stop_hook_active).await
}

/// Whether a hook asked this thread's turn to stop; taken, so the turn acts on it once.
pub(crate) fn stop_requested(shared: &ThreadShared) -> bool {
    hooks(shared).is_some_and(|hooks| hooks.stop_requested(shared))
}

/// For a call of `tool` that now waits for a person.
pub(crate) async fn notify_waiting(shared: &ThreadShared, tool: &str) {
    if let Some(hooks) = hooks(shared) {
        hooks.notify_waiting(shared, tool).await;
    }
}

/// A message carrying the hooks' words for the model, marked with the event.
pub(crate) fn context_message(shared: &ThreadShared, event: &'static str, text: String) -> MessageRecord {
    let marker = hooks(shared).map_or("hook_context", |hooks| hooks.context_marker());
    crate::thread_side::context_message(marker, event, text)
}

/// Waits for `hooks` unless the run's abort fires first, then `None`: dropping them kills
/// their commands with their process groups, so an abort does not wait out a timeout.
pub(crate) async fn unless_aborted<T>(state: &ThreadState, hooks: impl Future<Output = T>) -> Option<T> {
    let Some(abort) = state.execution.as_ref().map(|execution| execution.abort_signal.clone()) else {
        return Some(hooks.await);
    };
    if abort.is_aborted() {
        return None;
    }
    // The hooks first: when they answer at once (no settings hook, or one that is done), the
    // abort's poll timer is never armed. An abort that fired before is seen above.
    tokio::select! {
        biased;
        output = hooks => Some(output),
        () = super::model_step::aborted(&abort) => None,
    }
}
