//! `explain`: an agent's resolved table, as readable text and as the guide's agent-catalog JSON.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::kind::HookKind;
use crate::types::{HookSource, Side};

use super::agent::Participant;
use super::resolve::{ActiveContext, ResolvedAgent, ResolvedHook};

/// Each context with its label in `explain` text (as `define_agent!` spells the sides) and its
/// key in `explain_json` (camelCase, as every name of the JSON but the spec's own shapes).
const CONTEXTS: [(ActiveContext, &str, &str); 3] = [
    (ActiveContext::Side(Side::A), "side_a", "sideA"),
    (ActiveContext::Side(Side::B), "side_b", "sideB"),
    (ActiveContext::AtRest, "at_rest", "atRest"),
];

/// The resolved table as text: per side (and at rest), per kind, each hook in order with its
/// provenance, and for a child's hook its stage and reason.
///
/// ```
/// use hooks_runtime::prelude::*;
///
/// #[hook(filter_messages, id = "keep_recent")]
/// fn keep_recent(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage> {
///     messages
/// }
///
/// define_prompt! { name: helper_prompt, model: "small", prompt: "Help.", hooks: [keep_recent] }
/// define_agent! { name: helper, side_a: { prompt: helper_prompt }, side_b: { human: true } }
///
/// let resolved = ResolvedAgent::resolve(<helper as Agent>::DEF, &Registry::linked()).unwrap();
/// let text = hooks_runtime::explain(&resolved);
/// assert!(text.contains("keep_recent"));
/// ```
pub fn explain(resolved: &ResolvedAgent) -> String {
    let agent = resolved.agent();
    let mut out = String::new();
    let _ = writeln!(out, "agent {} (crate {} {})", agent.name, agent.package.name, agent.package.version);
    for (active, label, _) in CONTEXTS {
        let heading = match active {
            ActiveContext::Side(side) => match &agent.side(side).participant {
                Participant::Prompt(prompt) => format!("{label}: prompt {}", prompt.name),
                Participant::Human => format!("{label}: human"),
            },
            ActiveContext::AtRest => label.to_owned(),
        };
        let _ = writeln!(out, "  {heading}");
        let mut any = false;
        for &kind in HookKind::ALL {
            let chain = resolved.chain(active, kind);
            if chain.is_empty() {
                continue;
            }
            any = true;
            let _ = writeln!(out, "    {kind}");
            for (index, entry) in chain.iter().enumerate() {
                let _ = writeln!(out, "      {}. {:<24} {}", index + 1, entry.hook.id, provenance(resolved, entry));
            }
        }
        if !any {
            let _ = writeln!(out, "    (no hooks)");
        }
    }
    if !agent.parent_hooks.is_empty() {
        let _ = writeln!(out, "  requires of its parents");
        for requirement in agent.parent_hooks {
            let _ = writeln!(
                out,
                "    {:<24} {} ({}): {}",
                requirement.hook.id,
                requirement.stage.as_str(),
                requirement.hook.kind(),
                requirement.reason
            );
        }
    }
    out
}

fn provenance(resolved: &ResolvedAgent, entry: &ResolvedHook) -> String {
    let mut text = match &entry.context.source {
        HookSource::Prompt { prompt_name } => format!("prompt {prompt_name}"),
        HookSource::Agent { agent_name } => format!("agent {agent_name}"),
        HookSource::Child { relationship_name, agent_name, package } => {
            let package = package.as_ref().map(|p| format!(", crate {}", p.name)).unwrap_or_default();
            format!("child {agent_name} (as {relationship_name}{package})")
        }
        HookSource::Runtime => "runtime guard".to_owned(),
    };
    if let Some(requirement) = entry.requirement {
        let _ = write!(text, ", {}: {}", requirement.stage.as_str(), requirement.reason);
    }
    if let Some(slot) = entry.optional_slot {
        let _ = write!(text, " [optional: {}]", resolved.optional_relationships()[slot].name);
    }
    text
}

/// The resolved table as JSON: the guide's agent catalog, with each requirement's hook id,
/// reason and stage, and every chain with provenance. Names are camelCase (`exposeAsTool`,
/// `parentHooks`, the contexts `sideA`, `sideB` and `atRest`); a context's `hooks` are keyed by
/// kind, as the specification names the kinds (`filter_messages`), and `source` is the spec's
/// `HookSource`.
pub fn explain_json(resolved: &ResolvedAgent) -> Value {
    let agent = resolved.agent();
    let mut contexts = serde_json::Map::new();
    for (active, _, key) in CONTEXTS {
        let mut kinds = serde_json::Map::new();
        for &kind in HookKind::ALL {
            let chain = resolved.chain(active, kind);
            if chain.is_empty() {
                continue;
            }
            let entries: Vec<Value> = chain
                .iter()
                .map(|entry| {
                    let mut value = json!({
                        "id": entry.hook.id,
                        "source": entry.context.source,
                    });
                    if let Some(requirement) = entry.requirement {
                        value["stage"] = json!(requirement.stage.as_str());
                        value["reason"] = json!(requirement.reason);
                    }
                    if let Some(slot) = entry.optional_slot {
                        value["optionalRelationship"] = json!(resolved.optional_relationships()[slot].name);
                    }
                    value
                })
                .collect();
            kinds.insert(kind.name().to_owned(), Value::Array(entries));
        }
        let prompt = resolved.prompt_in(active).map(|prompt| prompt.name);
        contexts.insert(key.to_owned(), json!({ "prompt": prompt, "hooks": kinds }));
    }
    let parent_hooks: Vec<Value> = agent
        .parent_hooks
        .iter()
        .map(|r| json!({ "hook": r.hook.id, "kind": r.hook.kind().name(), "reason": r.reason, "stage": r.stage.as_str() }))
        .collect();
    json!({
        "agent": agent.name,
        "package": agent.package,
        "exposeAsTool": agent.expose_as_tool,
        "toolDescription": agent.tool_description,
        "parentHooks": parent_hooks,
        "resolved": contexts,
    })
}
