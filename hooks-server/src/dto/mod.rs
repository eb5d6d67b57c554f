//! The bodies the server reads and writes, typed: every request body (`Deserialize`), every
//! response body and every event stream payload (`Serialize`), one file per area. The handlers
//! build these and nothing else; the wire names are here, once.
//!
//! `serde_json::Value` appears only where the shape is a user's or the runtime's own JSON: a
//! user value, a thread's arguments, a tool call's arguments, an agent's `explain_json`, the
//! runtime's events and statuses as the store carries them, the MCP servers' listing.

pub(crate) mod approvals;
pub(crate) mod catalog;
pub(crate) mod error_body;
pub(crate) mod events;
#[cfg(feature = "inspector")]
pub(crate) mod inspector;
pub(crate) mod request_body;
pub(crate) mod threads;
pub(crate) mod users;
