-- Version 14: an index of the hidden sessions alone.
--
-- A relevance search checks each of up to 2,000 matches for visibility;
-- its session's hidden flag was a seek into sessions (its id index, then
-- its row) for every match. With this partial index the search reads the
-- hidden sessions once, as a set (usually empty), and checks each match
-- against it: the relevance window's query takes 8-15% less CPU
-- (docs/PERFORMANCE.md). A session that is not
-- hidden has no entry, so creating and updating ordinary sessions costs
-- nothing more.

-- +goose Up
CREATE INDEX sessions_hidden ON sessions (id) WHERE hidden = 1;

-- +goose Down
DROP INDEX sessions_hidden;
