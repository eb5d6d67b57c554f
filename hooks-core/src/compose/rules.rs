//! The rules `define_agent!` and `define_prompt!` check at compile time, checked again at
//! resolution for a definition built by hand with the `const` constructors, which no macro saw.

use super::agent::{AgentDef, SideDef};
use super::prompt::PromptDef;
use crate::def::{HookDef, first_repeat};

/// The first rule `agent` breaks, said as what is wrong and how to fix it; `None` when it keeps
/// them all.
pub(super) fn broken_rule(agent: &AgentDef) -> Option<String> {
    if agent.name.trim().is_empty() {
        return Some(
            "the agent has no name; threads and tool calls name an agent by it: give it one in `AgentDef::new`"
                .to_owned(),
        );
    }
    for (side, def) in [("side_a", &agent.side_a), ("side_b", &agent.side_b)] {
        if let Some(problem) = side_rule(side, def) {
            return Some(problem);
        }
    }
    if let Some(hook) = repeated(agent.hooks.iter().copied()) {
        return Some(format!("`{hook}` is listed twice in the agent's `hooks`; a hook runs once per list, remove one"));
    }
    if !agent.parent_hooks.is_empty() && !agent.expose_as_tool {
        return Some(
            "the agent has `parent_hooks` but is not exposed as a tool; only an agent other agents compose as a tool can require hooks of its parents: `with_expose_as_tool(true)`".to_owned(),
        );
    }
    if let Some(hook) = repeated(agent.parent_hooks.iter().map(|requirement| requirement.hook)) {
        return Some(format!("`{hook}` is required twice in the agent's `parent_hooks`; merge the two requirements"));
    }
    None
}

fn side_rule(side: &str, def: &SideDef) -> Option<String> {
    if def.max_steps == Some(0) {
        return Some(format!("{side} allows 0 model steps a turn; pass `with_max_steps` a whole number above 0"));
    }
    if let Some(prompt) = def.prompt()
        && let Some(problem) = prompt_rule(prompt)
    {
        return Some(format!("{side}: {problem}"));
    }
    let mut names: Vec<&str> = Vec::with_capacity(def.subagents.len());
    for relationship in def.subagents {
        let name = relationship.name;
        if !usable_name(name) {
            return Some(format!(
                "{side}: the relationship name `{name}` is not usable as a tool name; use ASCII letters, digits, `_` or `-`"
            ));
        }
        if names.contains(&name) {
            return Some(format!(
                "{side}: two subagent relationships are named `{name}`; give one of them another name"
            ));
        }
        if relationship.max_instances == Some(0) {
            return Some(format!(
                "{side}: relationship `{name}` allows 0 child threads; pass `with_max_instances` a whole number above 0"
            ));
        }
        names.push(name);
    }
    None
}

fn prompt_rule(prompt: &PromptDef) -> Option<String> {
    if prompt.name.trim().is_empty() {
        return Some(
            "a prompt has no name; hook provenance and errors name a prompt by it: give it one in `PromptDef::new`"
                .to_owned(),
        );
    }
    let hook = repeated(prompt.hooks.iter().copied())?;
    Some(format!(
        "`{hook}` is listed twice in prompt `{}`'s `hooks`; a hook runs once per list, remove one",
        prompt.name
    ))
}

/// A name the model can call: what `define_agent!` accepts as a relationship's `as`.
fn usable_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The id of the first hook in `hooks` that an earlier one is.
fn repeated<'h>(hooks: impl Iterator<Item = &'h HookDef>) -> Option<&'static str> {
    let hooks: Vec<&HookDef> = hooks.collect();
    first_repeat(&hooks).map(|(_, later)| hooks[later].id)
}
