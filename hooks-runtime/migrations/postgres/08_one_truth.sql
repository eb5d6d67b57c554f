-- One thread, one truth (O4, O7): who decided a parked call, when, and whether its step is
-- settled (the ledger keeps settled calls); and at most one stored result per tool call,
-- refused by a trigger (a unique index would refuse to migrate a database that already holds a
-- second result, and this step loses nothing). Inserts of one thread are serialized by the
-- lock on its row that every insert takes, so the trigger's check cannot race.
ALTER TABLE parked_tool_calls
    ADD COLUMN decided_by TEXT,
    ADD COLUMN decided_at BIGINT,
    ADD COLUMN settled BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX messages_by_tool_call ON messages (thread_id, tool_call_id) WHERE role = 'tool';
CREATE FUNCTION hooks_one_result_per_tool_call() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    IF NEW.role = 'tool' AND NEW.tool_call_id IS NOT NULL AND EXISTS (
        SELECT 1 FROM messages WHERE thread_id = NEW.thread_id AND role = 'tool' AND tool_call_id = NEW.tool_call_id
    ) THEN
        RAISE EXCEPTION 'a result of this tool call is already stored; a tool call has one result'
            USING ERRCODE = 'unique_violation';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER messages_one_result_per_tool_call BEFORE INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION hooks_one_result_per_tool_call();
