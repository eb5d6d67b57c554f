-- Version 1: threads and messages; `seq` is the insertion order of a message in its thread.
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
