-- Version 3: user value changes between processes, read by the `seq` their notification names.
CREATE TABLE user_events (
    seq BIGSERIAL PRIMARY KEY,
    user_id TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    change JSON NOT NULL
);
