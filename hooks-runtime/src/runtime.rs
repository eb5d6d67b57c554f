//! The runtime: agents, models, tools and a message store, verified and resolved at start-up
//! ([`RuntimeBuilder`]), and the [`Runtime`] handle threads are created and opened through.
//! This is the top layer: it builds the shared state (`crate::shared`) the threads run on.

mod agent_handle;
mod build_error;
mod builder;
mod handle;
mod user_sync;

pub use agent_handle::AgentHandle;
pub use build_error::BuildError;
pub use builder::RuntimeBuilder;
pub use handle::Runtime;
