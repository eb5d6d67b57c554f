-- Tool calls parked for approvals (A1, A2), one row per call of the parked step, `position`
-- its place in the model's call order; `arguments`, `reasons` and `result` as JSON text.
CREATE TABLE parked_tool_calls (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    reasons TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'running', 'done')),
    decision_reason TEXT,
    result TEXT,
    PRIMARY KEY (thread_id, id)
) STRICT;
