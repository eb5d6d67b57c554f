//! The SQLite schema and its migrations, one step per version, kept in `PRAGMA user_version`.
//!
//! The steps are the files of `migrations/sqlite/` in this crate, in the order of their numbers
//! (see that folder's README: a released step is never edited).

use std::time::Duration;

/// The schema version this build writes and reads, kept in `PRAGMA user_version`: the number of
/// [`MIGRATIONS`] applied.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The schema, one step per version: step `n` takes a file from version `n` to `n + 1`. A file
/// is brought up to [`SCHEMA_VERSION`] in the transaction that opens it; a file of a higher
/// version (from a newer build) is refused.
pub(super) const MIGRATIONS: [&str; 9] = [
    include_str!("../../../migrations/sqlite/01_threads_and_messages.sql"),
    include_str!("../../../migrations/sqlite/02_thread_values.sql"),
    include_str!("../../../migrations/sqlite/03_thread_inbox.sql"),
    include_str!("../../../migrations/sqlite/04_user_values.sql"),
    include_str!("../../../migrations/sqlite/05_parked_tool_calls.sql"),
    include_str!("../../../migrations/sqlite/06_one_truth.sql"),
    include_str!("../../../migrations/sqlite/07_user_events.sql"),
    include_str!("../../../migrations/sqlite/08_admission_record.sql"),
    include_str!("../../../migrations/sqlite/09_remembered_approvals.sql"),
];

/// How long a statement waits for another connection's lock before failing.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
