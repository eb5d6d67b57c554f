//! The runtime's side of `ThreadState`: what a hook's `inject_message`, `update_message`,
//! `queue_tool`, `emit` and values do.

use std::sync::Weak;

use hooks_core::{
    HookError, HookKind, HookMessage, HookResult, MessageQuery, MessageRecord, MessageUpdate, ThreadServices,
    ThreadState,
};
use serde_json::Value;

use super::ThreadShared;
use super::messages;
use super::pipeline::Pipeline;
use super::reentry::{Nested, TooDeep};
use crate::dispatch::FailureRule;
use crate::events::ThreadEvent;
use crate::limits::MAX_HOOK_DEPTH;

pub(crate) struct HookServices {
    pub(crate) shared: Weak<ThreadShared>,
}

impl HookServices {
    fn shared(&self) -> HookResult<std::sync::Arc<ThreadShared>> {
        self.shared.upgrade().ok_or_else(|| HookError::new("the thread no longer exists"))
    }
}

impl hooks_core::__private::Sealed for HookServices {}

#[async_trait::async_trait]
impl ThreadServices for HookServices {
    async fn get_messages(&self, _state: &ThreadState, query: MessageQuery) -> HookResult<Vec<HookMessage>> {
        let shared = self.shared()?;
        let messages = shared.journal.messages().await.map_err(|e| HookError::new(e.to_string()).with_source(e))?;
        Ok(query.select(messages))
    }

    /// R6, R8: persisted at once through the create pipeline; never restarts an assembly.
    /// E8: nested at most [`MAX_HOOK_DEPTH`] deep.
    async fn inject_message(&self, state: &ThreadState, message: MessageRecord) -> HookResult<HookMessage> {
        let shared = self.shared()?;
        let nested = Nested::enter(&shared).map_err(|too_deep| refuse(&shared, "inject_message", too_deep))?;
        let pipeline = Pipeline::for_state(&shared, state);
        let create = messages::create_returning(&pipeline, state, message, FailureRule::Prevent);
        nested.run(Box::pin(create)).await.map_err(messages::CreateError::into_hook_error)
    }

    async fn update_message(
        &self,
        state: &ThreadState,
        message_id: &str,
        update: MessageUpdate,
    ) -> HookResult<HookMessage> {
        let shared = self.shared()?;
        let nested = Nested::enter(&shared).map_err(|too_deep| refuse(&shared, "update_message", too_deep))?;
        let pipeline = Pipeline::for_state(&shared, state);
        nested.run(Box::pin(messages::update(&pipeline, state, message_id, update))).await
    }

    fn queue_tool(&self, _state: &ThreadState, tool: &str, arguments: Value) {
        if let Some(shared) = self.shared.upgrade() {
            shared.records.queue_tool(tool, arguments);
        }
    }

    fn emit(&self, _state: &ThreadState, event: &str, data: Value) {
        if let Some(shared) = self.shared.upgrade() {
            shared.events.emit(ThreadEvent::Custom { event: event.to_owned(), data });
        }
    }

    async fn get_value(&self, _state: &ThreadState, key: &str) -> Option<Value> {
        self.shared.upgrade()?.journal.value(key)
    }

    async fn set_value(&self, _state: &ThreadState, key: &str, value: Value) -> HookResult<()> {
        self.shared()?.journal.set_value(key, value).await.map_err(|e| HookError::new(e.to_string()).with_source(e))
    }
}

/// E8: the refused call's error, and its `[Hooks] ✗` line naming the hook point it came from.
#[cold]
fn refuse(shared: &ThreadShared, call: &str, too_deep: TooDeep) -> HookError {
    let point = too_deep.point.map(HookKind::name);
    tracing::error!(
        target: "hooks_runtime::hook",
        thread = %shared.id,
        "[Hooks] ✗ state.{call} from {} refused: hook calls back into the thread are nested {MAX_HOOK_DEPTH} deep, the limit",
        point.map_or_else(|| "a hook".to_owned(), |point| format!("a `{point}` hook"))
    );
    // Plain words, no quoting characters: a hook may pass the text on to a tool result.
    HookError::new(format!(
        "state.{call} from {} refused: hook calls back into this thread are nested {MAX_HOOK_DEPTH} deep, the limit \
         (a hook that writes a message whenever one is written recurses without end)",
        point.map_or_else(|| "a hook".to_owned(), |point| format!("a {point} hook"))
    ))
}
