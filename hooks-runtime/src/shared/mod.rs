//! What a built runtime shares with its threads: the layer between the parts a runtime is built
//! from (store, tools, models, governing, declarative hooks) and the thread pipelines above it.
//! `thread/` and `runtime/` both build on it, and it imports neither.

pub(crate) mod agent_entry;
pub(crate) mod history_buffers;
pub(crate) mod recovery_state;
pub(crate) mod registries;
pub(crate) mod runtime_inner;
pub(crate) mod tool_registry;
