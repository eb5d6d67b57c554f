//! The SQLite schema and its migrations, one step per version, kept in `PRAGMA user_version`.

use std::time::Duration;

/// The schema version this build writes and reads, kept in `PRAGMA user_version`: the number of
/// [`MIGRATIONS`] applied.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The schema, one step per version: step `n` takes a file from version `n` to `n + 1`. A file
/// is brought up to [`SCHEMA_VERSION`] in the transaction that opens it; a file of a higher
/// version (from a newer build) is refused.
pub(super) const MIGRATIONS: [&str; 7] =
    [SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, USER_VALUES_STEP, PARKED_CALLS_STEP, ONE_TRUTH_STEP, USER_EVENTS_STEP];

/// How long a statement waits for another connection's lock before failing.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Version 1: threads and messages; `seq` is the insertion order of a message in its thread.
const SCHEMA_V1: &str = "
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY NOT NULL,
    agent TEXT NOT NULL,
    user_id TEXT,
    created_at INTEGER NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    status_reason TEXT
) STRICT;
CREATE TABLE IF NOT EXISTS messages (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    seq INTEGER NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    name TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    created_at INTEGER NOT NULL,
    parent_id TEXT,
    depth INTEGER,
    silent INTEGER,
    extra TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (thread_id, id),
    UNIQUE (thread_id, seq)
) STRICT;
";

/// Version 2: thread values (M11), one row per key, its value as JSON text.
const SCHEMA_V2: &str = "
CREATE TABLE thread_values (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (thread_id, key)
) STRICT;
";

/// Version 3: each thread's inbox of accepted inputs, in acceptance order (`seq`); the message
/// is the accepted record as JSON text. The partial index finds threads left `running` for
/// recovery without reading the others.
const SCHEMA_V3: &str = "
CREATE TABLE thread_inbox (
    seq INTEGER PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id),
    id TEXT NOT NULL,
    message TEXT NOT NULL,
    enqueued_at INTEGER NOT NULL,
    UNIQUE (thread_id, id)
) STRICT;
CREATE INDEX thread_inbox_by_thread ON thread_inbox (thread_id, seq);
CREATE INDEX threads_running ON threads (id) WHERE status = 'running';
";

/// User values (U1), one row per user and key, its value as JSON text; `updated_at` in
/// milliseconds since the Unix epoch.
const USER_VALUES_STEP: &str = "
CREATE TABLE user_values (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, key)
) STRICT;
";

/// Tool calls parked for approvals (A1, A2), one row per call of the parked step, `position`
/// its place in the model's call order; `arguments`, `reasons` and `result` as JSON text.
const PARKED_CALLS_STEP: &str = "
CREATE TABLE parked_tool_calls (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    reasons TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'running', 'done')),
    decision_reason TEXT,
    result TEXT,
    PRIMARY KEY (thread_id, id)
) STRICT;
";

/// One thread, one truth (O2-O5, O7): the owner of each running thread (`owner`, a live
/// process's id, see `owner.rs`); the process that accepted each inbox entry; each thread's
/// events, for the other processes on the file (`seq` counts a thread's events from 1); who decided a
/// parked call, when, and whether its step is settled (the ledger keeps settled calls); and at most
/// one stored result per tool call, refused by a trigger (a unique index would refuse to
/// migrate a file that already holds a second result, and this step loses nothing).
const ONE_TRUTH_STEP: &str = "
CREATE TABLE thread_owners (
    thread_id TEXT PRIMARY KEY NOT NULL REFERENCES threads(id),
    owner TEXT NOT NULL,
    since INTEGER NOT NULL
) STRICT;
CREATE TABLE thread_events (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
) STRICT;
ALTER TABLE thread_inbox ADD COLUMN owner TEXT;
ALTER TABLE parked_tool_calls ADD COLUMN decided_by TEXT;
ALTER TABLE parked_tool_calls ADD COLUMN decided_at INTEGER;
ALTER TABLE parked_tool_calls ADD COLUMN settled INTEGER NOT NULL DEFAULT 0 CHECK (settled IN (0, 1));
CREATE INDEX messages_by_tool_call ON messages (thread_id, tool_call_id) WHERE role = 'tool';
CREATE TRIGGER messages_one_result_per_tool_call BEFORE INSERT ON messages
WHEN NEW.role = 'tool' AND NEW.tool_call_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM messages WHERE thread_id = NEW.thread_id AND role = 'tool' AND tool_call_id = NEW.tool_call_id
)
BEGIN
    SELECT RAISE(ABORT, 'a result of this tool call is already stored; a tool call has one result');
END;
";

/// User changes for the other processes on the file (a value changed, a thread created for a
/// user), in the order they were published: SQLite has one writer at a time, so `seq` order is
/// commit order and a follower that reads on from the last `seq` it delivered skips none.
const USER_EVENTS_STEP: &str = "
CREATE TABLE user_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    change TEXT NOT NULL
) STRICT;
";
