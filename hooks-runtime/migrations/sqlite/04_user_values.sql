-- User values (U1), one row per user and key, its value as JSON text; `updated_at` in
-- milliseconds since the Unix epoch.
CREATE TABLE user_values (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (user_id, key)
) STRICT;
