-- Version 3: each thread's inbox of accepted inputs, in acceptance order (`seq`); the message
-- is the accepted record as JSON text. The partial index finds threads left `running` for
-- recovery without reading the others.
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
