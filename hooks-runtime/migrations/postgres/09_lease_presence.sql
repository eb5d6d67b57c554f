-- Each lease says whether its owner was present when it wrote it (the key of the owner's
-- presence lock, see `presence`): a lease whose owner's lock no session holds is taken over
-- without waiting for its expiry. A lease of an older build has none, and expires as before.
ALTER TABLE thread_leases ADD COLUMN presence_key INTEGER;
