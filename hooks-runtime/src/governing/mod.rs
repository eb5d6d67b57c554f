//! Governing tool calls (clause G): the admission pipeline every tool call passes before it
//! runs, its deciders of this crate (the schema check, the authorizer, the runtime-wide guards,
//! the `before_tool_call` hooks, the tool's own approval), and the decision record.

pub(crate) mod admission;
pub(crate) mod caps;
pub(crate) mod gate;
pub(crate) mod governors;
pub(crate) mod guard;
pub(crate) mod remembered;
pub(crate) mod schema;
