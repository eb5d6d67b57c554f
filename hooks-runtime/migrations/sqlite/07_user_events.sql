-- User changes for the other processes on the file (a value changed, a thread created for a
-- user), in the order they were published: SQLite has one writer at a time, so `seq` order is
-- commit order and a follower that reads on from the last `seq` it delivered skips none.
CREATE TABLE user_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    change TEXT NOT NULL
) STRICT;
