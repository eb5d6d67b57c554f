-- One thread, one truth (O2-O5, O7): the owner of each running thread (`owner`, a live
-- process's id, see `owner.rs`); the process that accepted each inbox entry; each thread's
-- events, for the other processes on the file (`seq` counts a thread's events from 1); who decided a
-- parked call, when, and whether its step is settled (the ledger keeps settled calls); and at most
-- one stored result per tool call, refused by a trigger (a unique index would refuse to
-- migrate a file that already holds a second result, and this step loses nothing).
CREATE TABLE thread_owners (
    thread_id TEXT PRIMARY KEY NOT NULL REFERENCES threads(id),
    owner TEXT NOT NULL,
    since INTEGER NOT NULL
) STRICT;
CREATE TABLE thread_events (
    thread_id TEXT NOT NULL REFERENCES threads(id),
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
) STRICT;
ALTER TABLE thread_inbox ADD COLUMN owner TEXT;
ALTER TABLE parked_tool_calls ADD COLUMN decided_by TEXT;
ALTER TABLE parked_tool_calls ADD COLUMN decided_at INTEGER;
ALTER TABLE parked_tool_calls ADD COLUMN settled INTEGER NOT NULL DEFAULT 0 CHECK (settled IN (0, 1));
CREATE INDEX messages_by_tool_call ON messages (thread_id, tool_call_id) WHERE role = 'tool';
CREATE TRIGGER messages_one_result_per_tool_call BEFORE INSERT ON messages
WHEN NEW.role = 'tool' AND NEW.tool_call_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM messages WHERE thread_id = NEW.thread_id AND role = 'tool' AND tool_call_id = NEW.tool_call_id
)
BEGIN
    SELECT RAISE(ABORT, 'a result of this tool call is already stored; a tool call has one result');
END;
