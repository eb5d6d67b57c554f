-- Version 1: threads, messages and thread values (M11), as in the SQLite store. JSON columns are
-- `json` (kept as written) with checks, so every stored row can be read back.
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
