-- Tool calls parked for approvals (A1, A2), one row per call of the parked step in the model's
-- call order (`position`).
CREATE TABLE parked_tool_calls (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    id TEXT NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 0),
    tool TEXT NOT NULL,
    arguments JSON NOT NULL,
    reasons JSON NOT NULL CHECK (json_typeof(reasons) = 'array'),
    requested_at BIGINT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'running', 'done')),
    decision_reason TEXT,
    result JSON,
    PRIMARY KEY (thread_id, id)
);
