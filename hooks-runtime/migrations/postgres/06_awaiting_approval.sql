-- The status `awaiting_approval`, which has no reason: the status checks of version 1 (by the
-- names PostgreSQL gave them, when the table has them) give way to ones that allow it. Every
-- row this store wrote passes both.
ALTER TABLE threads
    DROP CONSTRAINT IF EXISTS threads_status_check,
    DROP CONSTRAINT IF EXISTS threads_check,
    ADD CONSTRAINT threads_status_check
        CHECK (status IN ('idle', 'running', 'stopped', 'failed', 'awaiting_approval')),
    ADD CONSTRAINT threads_status_reason_check
        CHECK (status NOT IN ('stopped', 'failed') OR status_reason IS NOT NULL);
