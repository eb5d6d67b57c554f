//! Other agents in a turn: the tools a prompt offers (tools, handoff targets, visible subagent
//! relationships) and handoffs (S10, M10). Subagent relationships run as child threads
//! (`children`).

use hooks_core::{HookToolCall, HookToolResult, MessageRecord, PromptDef, Role, ThreadState};
use serde_json::json;

use super::TurnEnd;
use super::journal::Origin;
use super::messages;
use super::pipeline::Pipeline;
use super::tool_calls;
use crate::dispatch::FailureRule;
use crate::model::ToolSpec;

/// The tools a prompt offers: registered tools, handoff agents, and the active agent's
/// visible subagent relationships.
///
/// An MCP server's tools (`mcp__<server>__<tool>`, or all of them with `mcp__<server>__*`) are
/// those of its last listing; a server that has not listed its tools yet is started first.
pub(crate) async fn tool_specs(pipeline: &Pipeline<'_>, prompt: &PromptDef) -> Vec<ToolSpec> {
    let runtime = &pipeline.shared.runtime;
    let mut specs = Vec::new();
    let spec = |tool: &dyn crate::tool::Tool| ToolSpec {
        name: tool.name().to_owned(),
        description: tool.description().to_owned(),
        parameters: tool.parameters(),
    };
    for name in prompt.tools {
        if let Some(tool) = runtime.registries.tools.get(name) {
            specs.push(spec(tool.as_ref()));
            continue;
        }
        #[cfg(feature = "mcp")]
        // Boxed: a server's start is a large future, which every turn's future would
        // otherwise carry inline (and re-entrant hooks nest turns).
        if crate::mcp::split_tool_name(name).is_some()
            && let Some(tools) = Box::pin(runtime.registries.tools.mcp.offered(name)).await
        {
            // A tool both named and under its server's wildcard is offered once.
            for tool in tools {
                if !specs.iter().any(|offered: &ToolSpec| offered.name == tool.name()) {
                    specs.push(spec(tool.as_ref()));
                }
            }
            // F6: a pinned tool that changed is not offered, and the thread says so.
            for (tool, reason) in runtime.registries.tools.mcp.withheld(name) {
                pipeline.shared.events.emit(crate::events::ThreadEvent::Custom {
                    event: crate::mcp::MCP_TOOL_WITHHELD_EVENT.to_owned(),
                    data: json!({"tool": tool, "reason": reason}),
                });
            }
            continue;
        }
        if let Some(agent) = runtime.registries.agents.get(name) {
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
    if runtime.registries.tools.contains_key(tool) || !prompt.tools.contains(&tool) {
        return None;
    }
    runtime.registries.agents.get(tool).map(|entry| entry.def.name)
}

pub(crate) fn subagent_relationship(pipeline: &Pipeline<'_>, tool: &str) -> Option<&'static str> {
    if pipeline.shared.runtime.registries.tools.contains_key(tool) {
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
    tool_calls::finish_call(pipeline, state, call, result, tool_calls::CallEnd::Ran, None).await;
    let text = serde_json::from_str::<serde_json::Value>(&call.function.arguments)
        .ok()
        .and_then(|arguments| arguments.get("message").and_then(|m| m.as_str()).map(str::to_owned))
        .unwrap_or_default();
    let mut message = MessageRecord::new(Role::User, text);
    message.extra.insert("handoff_to".into(), json!(target));
    // O2: the store records the new agent with the message (or alone, when a hook prevents the
    // message); the live state follows only once the store has it.
    let origin = Origin::Handoff(target);
    match messages::create_from(pipeline, state, message, FailureRule::Prevent, origin).await {
        Ok(_) | Err(messages::CreateError::Prevented(_)) => {}
        Err(error) => {
            let error = error.into_hook_error();
            tracing::error!(target: "hooks_runtime::thread", thread = %pipeline.shared.id, agent = target, "the handoff could not be stored: {}", error.message());
            return TurnEnd::Failed(crate::reasons::FailReason::StoreError);
        }
    }
    let entry = pipeline
        .shared
        .runtime
        .registries
        .agents
        .get(target)
        .cloned()
        .expect("handoff target is an agent of the runtime");
    pipeline.shared.agent.hand_off_to(entry);
    TurnEnd::HandedOff(target.to_owned())
}
