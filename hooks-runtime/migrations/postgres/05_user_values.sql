-- User values (U1), one row per user and key; `updated_at` in milliseconds since the Unix epoch.
CREATE TABLE user_values (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value JSON NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, key)
);
