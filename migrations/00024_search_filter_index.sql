-- Version 24: a narrow index of what a filtered search checks per match.
--
-- A relevance search by words ranks the newest 2,000 matches that pass
-- its filters. With a filter (a source, a session, roles, excluded
-- sources) or a hidden session in the store, each match's session, role
-- and state were read from its messages row: a b-tree descent into the
-- largest table, one leaf page a match, for a source holding a quarter of
-- the sessions ~8,000 of them (37 ms at a million messages, most of it
-- those descents and the pages they pull through the reader's cache).
-- This index holds the four columns in id order, ~100 entries a page: the
-- window reads it instead of the table (db/search_paths.go,
-- docs/PERFORMANCE.md "Search at a million"). Appends add one entry at
-- its right edge; a rewind or an undo rewrites the entries it moves.

-- +goose Up
CREATE INDEX messages_search_filter ON messages (id, session_id, role, state);

-- +goose Down
DROP INDEX messages_search_filter;
