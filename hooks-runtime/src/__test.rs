//! Not public API. The internals that this package's integration tests (and the workspace's
//! `tests` package) drive directly; they may change or disappear in any release. Compiled only
//! with the `__test` feature, which the package's self dev-dependency turns on for its tests.
//!
//! What is here is crate-private in a normal build: the PostgreSQL store's thread leases, which
//! the runtime takes through `RunOwnership::hold_run`.

#[cfg(feature = "postgres")]
pub use crate::store::postgres::lease::{Lease, LeaseGuard, PostgresLeases};
