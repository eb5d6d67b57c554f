//! Subagent relationships as child threads: creating one (respecting `max_instances`) and
//! running one as a tool call, whose result is the child's reply.

use std::sync::Arc;

use hooks_core::{HookKind, HookToolCall, HookToolResult, ThreadState};

use super::pipeline::Pipeline;
use super::{RuntimeError, Thread, ThreadShared};
use crate::dispatch;
use crate::events::ThreadStatus;

/// Creates a child thread for `relationship`, respecting `max_instances`, and runs
/// `after_subagent_created` on the parent.
pub(crate) async fn spawn(
    shared: &Arc<ThreadShared>,
    state: &ThreadState,
    relationship_name: &str,
) -> Result<Thread, RuntimeError> {
    let agent = shared.agent.current();
    let relationship = agent
        .def
        .relationship(relationship_name)
        .ok_or_else(|| RuntimeError::unknown_relationship(agent.def, relationship_name, false))?;
    if let Some(max) = relationship.max_instances
        && shared.records.child_count(relationship.name) >= max as usize
    {
        return Err(RuntimeError::MaxInstances { relationship: relationship.name.to_owned(), max });
    }
    let options = super::ThreadOptions { user_id: state.user_id.clone(), arguments: Default::default() };
    let child = Thread::create_child(&shared.runtime, &shared.live, relationship.agent.name, options).await?;
    shared.records.add_child(relationship.name, child.shared.clone());
    let pipeline = Pipeline::for_state(shared, state);
    let child_state = child.shared.lock_run().await;
    if let Some(chain) = pipeline.chain(HookKind::AfterSubagentCreated) {
        dispatch::await_point!(dispatch::after_subagent_created(&chain, state, &child_state));
    }
    drop(child_state);
    Ok(child)
}

/// A subagent relationship called as a tool: its child thread (reused, or created) answers the
/// call's `message`; the child's reply is the result.
/// Boxed with an explicit `Send` future type: the call is recursive (a child's turn runs tool
/// calls too), and an explicit type is what lets the compiler prove it `Send`.
pub(crate) fn run_as_tool<'a>(
    pipeline: &'a Pipeline<'_>,
    state: &'a ThreadState,
    relationship: &'static str,
    call: &'a HookToolCall,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = HookToolResult> + Send + 'a>> {
    Box::pin(async move {
        let shared = match pipeline.shared.self_arc() {
            Some(shared) => shared,
            None => return HookToolResult::error("the thread no longer exists"),
        };
        let child = match shared.records.child(relationship) {
            Some(child) => Thread { shared: child },
            None => match spawn(&shared, state, relationship).await {
                Ok(child) => child,
                Err(error) => return HookToolResult::error(error.to_string()),
            },
        };
        let text = serde_json::from_str::<serde_json::Value>(&call.function.arguments)
            .ok()
            .and_then(|arguments| arguments.get("message").and_then(|m| m.as_str()).map(str::to_owned))
            .unwrap_or_else(|| call.function.arguments.clone());
        match child.send(&text).await {
            Ok(outcome) => match (outcome.status, outcome.reply) {
                (ThreadStatus::Idle, Some(reply)) => HookToolResult::success(reply),
                (ThreadStatus::Idle, None) => HookToolResult::success(""),
                // Plain words only: this text can reach a declarative shell command as ${error}.
                (status, _) => HookToolResult::error(match status {
                    ThreadStatus::Stopped(reason) => format!("the subagent {relationship} stopped: {reason}"),
                    ThreadStatus::Failed(reason) => format!("the subagent {relationship} failed: {reason}"),
                    other => format!("the subagent {relationship} ended while {other}"),
                }),
            },
            Err(error) => HookToolResult::error(error.to_string()),
        }
    })
}
