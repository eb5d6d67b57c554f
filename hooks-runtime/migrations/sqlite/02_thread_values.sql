-- Version 2: thread values (M11), one row per key, its value as JSON text.
CREATE TABLE thread_values (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (thread_id, key)
) STRICT;
