-- Approvals a person chose to remember (A9): each answers later asks of calls of `tool` within
-- its scope (`thread`: `thread_id`; `user`: the threads of `user_id`; `always`: every thread)
-- whose arguments hash to `matcher` (`matcher_kind` 'arguments') or that the permission rule
-- `matcher` selects (`matcher_kind` 'pattern'), until revoked (the row deleted).
CREATE TABLE remembered_approvals (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL CHECK (scope IN ('thread', 'user', 'always')),
    tool TEXT NOT NULL,
    matcher_kind TEXT NOT NULL CHECK (matcher_kind IN ('arguments', 'pattern')),
    matcher TEXT NOT NULL,
    user_id TEXT,
    thread_id TEXT,
    created_at INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    CHECK (scope <> 'thread' OR thread_id IS NOT NULL),
    CHECK (scope <> 'user' OR user_id IS NOT NULL)
) STRICT;
CREATE INDEX remembered_approvals_by_tool ON remembered_approvals (tool, created_at, id);
