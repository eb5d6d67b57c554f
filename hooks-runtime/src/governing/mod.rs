//! Governing tool calls (clause G): the gate every tool call passes before it runs, the
//! runtime-wide guards, and the tools' schemas.

pub(crate) mod caps;
pub(crate) mod gate;
pub(crate) mod governors;
pub(crate) mod guard;
pub(crate) mod schema;
