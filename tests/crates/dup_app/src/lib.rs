//! Links two crates that define the same hook id.

pub use dup_hooks_a::audit;
pub use dup_hooks_b::audit_async;
