-- Version 4: each thread's inbox of accepted inputs, in acceptance order (`seq`); `stored_at`
-- is the server's clock, for the recovery sweep's grace period. The partial index keeps the
-- sweep's look for threads left `running` off the rest of the table.
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
