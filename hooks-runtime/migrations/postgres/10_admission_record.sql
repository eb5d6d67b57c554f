-- Each parked call keeps its decision record (G15): every decider of the admission pipeline
-- that answered, in order, with the arguments' hashes; none for a call parked by an older build.
ALTER TABLE parked_tool_calls ADD COLUMN admission JSON;
