//! The registry as an agent's tool-call listener: tool calls become hook events.

use super::{DeclarativeHookRegistry, HookContext, HookEvent};
use crate::tool_listener::{ToolCallListener, ToolCallOutcome};

/// What [`DeclarativeHookRegistry::apply_to`] installs on an agent.
pub(super) struct DeclarativeToolCallListener {
    registry: DeclarativeHookRegistry,
}

impl DeclarativeToolCallListener {
    pub(super) fn new(registry: DeclarativeHookRegistry) -> Self {
        DeclarativeToolCallListener { registry }
    }
}

#[async_trait::async_trait]
impl ToolCallListener for DeclarativeToolCallListener {
    async fn before_tool_call(&self, tool: &str) {
        let context = HookContext::from([("event".to_owned(), HookEvent::PreToolUse.camel_case().to_owned())]);
        self.registry.fire_tool_event(HookEvent::PreToolUse, tool, &context).await;
    }

    async fn after_tool_call(&self, tool: &str, outcome: &ToolCallOutcome) {
        let mut context = HookContext::from([
            ("event".to_owned(), HookEvent::PostToolUse.camel_case().to_owned()),
            ("success".to_owned(), outcome.success.to_string()),
            ("latencyMs".to_owned(), outcome.latency.as_millis().to_string()),
        ]);
        self.registry.fire_tool_event(HookEvent::PostToolUse, tool, &context).await;
        if !outcome.success {
            // As in the reference, ON_ERROR sees the POST_TOOL_USE context plus `error`, so its
            // `event` value stays `postToolUse`.
            context.insert("error".to_owned(), outcome.error.clone().unwrap_or_default());
            self.registry.fire_tool_event(HookEvent::OnError, tool, &context).await;
        }
    }
}
