-- Version 2: scale-out. Thread events (`seq` counts a thread's events from 1, without gaps) and
-- one lease row per running thread; `epoch` grows with every change of owner.
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
