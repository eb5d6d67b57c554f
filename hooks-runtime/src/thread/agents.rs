//! Other agents in a turn: the tools a prompt offers (tools, handoff targets, visible subagent
//! relationships), handoffs (S10, M10), and subagent relationships as child threads.

use std::sync::{Arc, PoisonError};

use hooks_core::{HookKind, HookToolCall, HookToolResult, MessageRecord, PromptDef, Role, ThreadState};
use serde_json::json;

use super::messages;
use super::pipeline::Pipeline;
use super::tool_calls;
use super::turn::TurnEnd;
use super::{ChildThread, RuntimeError, Thread, ThreadShared};
use crate::dispatch::{self, FailureRule};
use crate::model::ToolSpec;
use crate::store::ThreadStatus;

/// The tools a prompt offers: registered tools, handoff agents, and the active agent's
/// visible subagent relationships.
pub(crate) fn tool_specs(pipeline: &Pipeline<'_>, prompt: &PromptDef) -> Vec<ToolSpec> {
    let runtime = &pipeline.shared.runtime;
    let mut specs = Vec::new();
    for name in prompt.tools {
        if let Some(tool) = runtime.tools.get(*name) {
            specs.push(ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters(),
            });
        } else if let Some(agent) = runtime.agents.get(name) {
            specs.push(agent_tool_spec(name, agent.def.tool_description));
        }
    }
    for relationship in pipeline.agent.def.relationships().filter(|relationship| !relationship.hidden) {
        specs.push(agent_tool_spec(relationship.name, relationship.agent.tool_description));
    }
    specs
}

fn agent_tool_spec(name: &str, description: Option<&str>) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.unwrap_or("Hands the conversation to this agent.").to_owned(),
        parameters: json!({
            "type": "object",
            "properties": { "message": { "type": "string", "description": "What to ask or hand over." } },
        }),
    }
}

/// S10: a prompt tool that names an agent is a handoff, not a relationship.
pub(crate) fn handoff_target(pipeline: &Pipeline<'_>, prompt: &PromptDef, tool: &str) -> Option<&'static str> {
    let runtime = &pipeline.shared.runtime;
    if runtime.tools.contains_key(tool) || !prompt.tools.contains(&tool) {
        return None;
    }
    runtime.agents.get(tool).map(|entry| entry.def.name)
}

pub(crate) fn subagent_relationship(pipeline: &Pipeline<'_>, tool: &str) -> Option<&'static str> {
    if pipeline.shared.runtime.tools.contains_key(tool) {
        return None;
    }
    pipeline.agent.def.relationship(tool).map(|relationship| relationship.name)
}

/// M10: the handoff message may be prevented; the handoff happens anyway. The call gets a
/// tool result so the history stays a valid provider exchange.
pub(crate) async fn handoff(
    pipeline: &Pipeline<'_>,
    state: &ThreadState,
    call: &HookToolCall,
    target: &'static str,
) -> TurnEnd {
    let result = HookToolResult::success(format!("Handed off to {target}."));
    tool_calls::finish_call(pipeline, state, call, result).await;
    let text = serde_json::from_str::<serde_json::Value>(&call.function.arguments)
        .ok()
        .and_then(|arguments| arguments.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_default();
    let mut message = MessageRecord::new(Role::User, text);
    message.extra.insert("handoff_to".into(), json!(target));
    let _ = messages::create(pipeline, state, message, FailureRule::Prevent).await;
    let entry = pipeline.shared.runtime.agents.get(target).cloned().expect("handoff target is an agent of the runtime");
    *pipeline.shared.agent.write().unwrap_or_else(PoisonError::into_inner) = entry;
    TurnEnd::HandedOff(target.to_owned())
}

/// Creates a child thread for `relationship`, respecting `max_instances`, and runs
/// `after_subagent_created` on the parent.
pub(crate) async fn spawn_child(
    shared: &Arc<ThreadShared>,
    state: &ThreadState,
    relationship_name: &str,
) -> Result<Thread, RuntimeError> {
    let agent = shared.agent();
    let relationship = agent
        .def
        .relationship(relationship_name)
        .ok_or_else(|| RuntimeError::unknown_relationship(agent.def, relationship_name, false))?;
    if let Some(max) = relationship.max_instances {
        let existing = shared
            .children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|child| child.relationship == relationship.name)
            .count();
        if existing >= max as usize {
            return Err(RuntimeError::MaxInstances { relationship: relationship.name.to_owned(), max });
        }
    }
    let runtime = crate::runtime::Runtime { inner: shared.runtime.clone() };
    let options = super::ThreadOptions { user_id: state.user_id.clone(), arguments: Default::default() };
    let child = runtime.create_thread(relationship.agent.name, options).await?;
    shared
        .children
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(ChildThread { relationship: relationship.name, thread: child.clone() });
    let pipeline = Pipeline::for_state(shared, state);
    let child_state = child.shared.run.lock().await;
    if let Some(chain) = pipeline.chain(HookKind::AfterSubagentCreated) {
        dispatch::after_subagent_created(&chain, state, &child_state).await;
    }
    drop(child_state);
    Ok(child)
}

/// A subagent relationship called as a tool: its child thread (reused, or created) answers the
/// call's `message`; the child's reply is the result.
/// Boxed with an explicit `Send` future type: the call is recursive (a child's turn runs tool
/// calls too), and an explicit type is what lets the compiler prove it `Send`.
pub(crate) fn run_child_as_tool<'a>(
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
        let existing = shared
            .children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|child| child.relationship == relationship)
            .map(|child| child.thread.clone());
        let child = match existing {
            Some(child) => child,
            None => match spawn_child(&shared, state, relationship).await {
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
