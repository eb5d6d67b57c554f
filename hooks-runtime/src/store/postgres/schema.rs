//! The PostgreSQL schema and its migrations.
//!
//! The version lives in the one-row table `hooks_schema_version`. A store that connects takes a
//! transaction-scoped advisory lock for its schema, so two processes starting at once migrate
//! one after the other, then applies every step above the stored version. A database whose
//! version is higher than this build's (written by a newer build) is refused, and so is one that
//! has this store's tables but no version: it was not created by this store.

use tokio_postgres::Transaction;

/// The schema version this build writes and reads: the number of [`MIGRATIONS`].
pub(super) const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// The schema, one step per version: step `n` takes a database from version `n` to `n + 1`.
pub(super) const MIGRATIONS: [&str; 9] = [
    SCHEMA_V1,
    SCHEMA_V2,
    SCHEMA_V3,
    SCHEMA_V4,
    USER_VALUES_STEP,
    AWAITING_APPROVAL_STEP,
    PARKED_CALLS_STEP,
    ONE_TRUTH_STEP,
    PRESENCE_STEP,
];

/// The tables this store owns, for telling a foreign database from an empty one.
const OWN_TABLES: [&str; 9] = [
    "threads",
    "messages",
    "thread_values",
    "thread_events",
    "thread_leases",
    "user_events",
    "thread_inbox",
    "user_values",
    "parked_tool_calls",
];

/// Version 1: threads, messages and thread values (M11), as in the SQLite store. JSON columns are
/// `json` (kept as written) with checks, so every stored row can be read back.
const SCHEMA_V1: &str = "
CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    agent TEXT NOT NULL,
    user_id TEXT,
    created_at BIGINT NOT NULL,
    arguments JSON NOT NULL CHECK (json_typeof(arguments) = 'object'),
    status TEXT NOT NULL CHECK (status IN ('idle', 'running', 'stopped', 'failed')),
    status_reason TEXT,
    CHECK (status IN ('idle', 'running') OR status_reason IS NOT NULL)
);
CREATE TABLE messages (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    seq BIGINT NOT NULL,
    id TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content TEXT,
    name TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    created_at BIGINT NOT NULL,
    parent_id TEXT,
    depth BIGINT CHECK (depth BETWEEN 0 AND 4294967295),
    silent BOOLEAN,
    extra JSON NOT NULL CHECK (json_typeof(extra) = 'object'),
    PRIMARY KEY (thread_id, id),
    UNIQUE (thread_id, seq)
);
CREATE TABLE thread_values (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    key TEXT NOT NULL,
    value JSON NOT NULL,
    PRIMARY KEY (thread_id, key)
);
";

/// Version 2: scale-out. Thread events (`seq` counts a thread's events from 1, without gaps) and
/// one lease row per running thread; `epoch` grows with every change of owner.
const SCHEMA_V2: &str = "
CREATE TABLE thread_events (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    seq BIGINT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    event JSON NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
CREATE TABLE thread_leases (
    thread_id TEXT PRIMARY KEY REFERENCES threads(id),
    owner TEXT NOT NULL,
    epoch BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
";

/// Version 3: user value changes between processes, read by the `seq` their notification names.
const SCHEMA_V3: &str = "
CREATE TABLE user_events (
    seq BIGSERIAL PRIMARY KEY,
    user_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    change JSON NOT NULL
);
";

/// Version 4: each thread's inbox of accepted inputs, in acceptance order (`seq`); `stored_at`
/// is the server's clock, for the recovery sweep's grace period. The partial index keeps the
/// sweep's look for threads left `running` off the rest of the table.
const SCHEMA_V4: &str = "
CREATE TABLE thread_inbox (
    seq BIGSERIAL PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads(id),
    id TEXT NOT NULL,
    message JSON NOT NULL CHECK (json_typeof(message) = 'object'),
    enqueued_at BIGINT NOT NULL,
    stored_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (thread_id, id)
);
CREATE INDEX thread_inbox_by_thread ON thread_inbox (thread_id, seq);
CREATE INDEX threads_running ON threads (id) WHERE status = 'running';
";

/// User values (U1), one row per user and key; `updated_at` in milliseconds since the Unix epoch.
const USER_VALUES_STEP: &str = "
CREATE TABLE user_values (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value JSON NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, key)
);
";

/// The status `awaiting_approval`, which has no reason: the status checks of version 1 (by the
/// names PostgreSQL gave them, when the table has them) give way to ones that allow it. Every
/// row this store wrote passes both.
const AWAITING_APPROVAL_STEP: &str = "
ALTER TABLE threads
    DROP CONSTRAINT IF EXISTS threads_status_check,
    DROP CONSTRAINT IF EXISTS threads_check,
    ADD CONSTRAINT threads_status_check
        CHECK (status IN ('idle', 'running', 'stopped', 'failed', 'awaiting_approval')),
    ADD CONSTRAINT threads_status_reason_check
        CHECK (status NOT IN ('stopped', 'failed') OR status_reason IS NOT NULL);
";

/// Tool calls parked for approvals (A1, A2), one row per call of the parked step in the model's
/// call order (`position`).
const PARKED_CALLS_STEP: &str = "
CREATE TABLE parked_tool_calls (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    id TEXT NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 0),
    tool TEXT NOT NULL,
    arguments JSON NOT NULL,
    reasons JSON NOT NULL CHECK (json_typeof(reasons) = 'array'),
    requested_at BIGINT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'running', 'done')),
    decision_reason TEXT,
    result JSON,
    PRIMARY KEY (thread_id, id)
);
";

/// One thread, one truth (O4, O7): who decided a parked call, when, and whether its step is
/// settled (the ledger keeps settled calls); and at most one stored result per tool call,
/// refused by a trigger (a unique index would refuse to migrate a database that already holds a
/// second result, and this step loses nothing). Inserts of one thread are serialized by the
/// lock on its row that every insert takes, so the trigger's check cannot race.
const ONE_TRUTH_STEP: &str = "
ALTER TABLE parked_tool_calls
    ADD COLUMN decided_by TEXT,
    ADD COLUMN decided_at BIGINT,
    ADD COLUMN settled BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX messages_by_tool_call ON messages (thread_id, tool_call_id) WHERE role = 'tool';
CREATE FUNCTION hooks_one_result_per_tool_call() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.role = 'tool' AND NEW.tool_call_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM messages WHERE thread_id = NEW.thread_id AND role = 'tool' AND tool_call_id = NEW.tool_call_id
    ) THEN
        RAISE EXCEPTION 'a result of this tool call is already stored; a tool call has one result'
            USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER messages_one_result_per_tool_call BEFORE INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION hooks_one_result_per_tool_call();
";

/// Each lease says whether its owner was present when it wrote it (the key of the owner's
/// presence lock, see `presence`): a lease whose owner's lock no session holds is taken over
/// without waiting for its expiry. A lease of an older build has none, and expires as before.
const PRESENCE_STEP: &str = "
ALTER TABLE thread_leases ADD COLUMN presence_key INTEGER;
";

/// Brings the schema `search_path` points at up to [`SCHEMA_VERSION`], in the caller's
/// transaction; `schema`, when given, is created first. Errors are plain sentences for
/// [`super::PostgresStore::connect`] to prefix.
pub(super) async fn migrate(tx: &Transaction<'_>, schema: Option<&str>) -> Result<(), String> {
    let pg = |e: tokio_postgres::Error| super::driver::describe_pg(&e);
    let lock_key = format!("hooks-runtime schema {}", schema.unwrap_or("(search_path)"));
    tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&lock_key]).await.map_err(pg)?;
    if let Some(schema) = schema {
        // Looked up first rather than `CREATE SCHEMA IF NOT EXISTS`, whose NOTICE for an existing
        // schema the driver logs at INFO on every start but the first. The advisory lock above
        // makes the look-up and the creation one step among processes.
        let exists: bool = tx
            .query_one("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", &[&schema])
            .await
            .map_err(pg)?
            .get(0);
        if !exists {
            // The name was checked to be a plain lower-case identifier, so it needs no quoting.
            tx.batch_execute(&format!("CREATE SCHEMA {schema}")).await.map_err(pg)?;
        }
    }
    let versioned: bool =
        tx.query_one("SELECT to_regclass('hooks_schema_version') IS NOT NULL", &[]).await.map_err(pg)?.get(0);
    let version: i32 = if versioned {
        let row = tx.query_opt("SELECT version FROM hooks_schema_version", &[]).await.map_err(pg)?;
        row.map(|row| row.get(0)).ok_or("the table `hooks_schema_version` is empty")?
    } else {
        let mut found = Vec::new();
        for table in OWN_TABLES {
            let exists: bool = tx.query_one("SELECT to_regclass($1) IS NOT NULL", &[&table]).await.map_err(pg)?.get(0);
            if exists {
                found.push(format!("`{table}`"));
            }
        }
        if !found.is_empty() {
            return Err(format!(
                "the schema already has tables named like this store's ({}) but no `hooks_schema_version`: \
                 they were not created by this store, which will not adopt or change them; use another schema",
                found.join(", ")
            ));
        }
        tx.batch_execute(
            "CREATE TABLE hooks_schema_version (version INTEGER NOT NULL); INSERT INTO hooks_schema_version VALUES (0)",
        )
        .await
        .map_err(pg)?;
        0
    };
    if version > SCHEMA_VERSION {
        return Err(format!(
            "the database has hooks-runtime schema version {version}, newer than version {SCHEMA_VERSION} that this \
             build reads; connect with a newer hooks-runtime"
        ));
    }
    for (from, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(version).unwrap_or(0)) {
        tx.batch_execute(step).await.map_err(|e| {
            format!("migrate the schema from version {from} to {}: {}", from + 1, super::driver::describe_pg(&e))
        })?;
    }
    if version < SCHEMA_VERSION {
        tx.execute("UPDATE hooks_schema_version SET version = $1", &[&SCHEMA_VERSION]).await.map_err(pg)?;
    }
    Ok(())
}
