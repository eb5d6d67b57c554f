//! D6: an agent that names itself in its own `subagents` is an error on that name, not a cycle
//! of rustc's queries.
use hooks_runtime::prelude::*;

define_prompt! { name: research_prompt, model: "m", prompt: "Research, delegating parts." }

define_agent! {
    name: researcher,
    expose_as_tool: true,
    side_a: { prompt: research_prompt, subagents: [{ agent: researcher, max_instances: 2 }] },
    side_b: { human: true },
}

define_agent! {
    name: planner,
    side_a: { prompt: research_prompt, subagents: [{ agent: self::planner, as: helper }] },
}

fn main() {}
