-- The word index over a stored vector (issue 37). messages_words indexed
-- the expression sessiondb_words(content, tool_name, tool_text), which the
-- server recomputed (unaccent, a regular expression and to_tsvector for
-- each of three fields) for every row a search's plan read past the index
-- — each candidate of the relevance window it walks newest first, each
-- row ts_rank scored — at some 100 µs a row: a word in one message in ten
-- cost 2 s at 100,000 messages. messages.words holds the vector, kept by
-- the server as a generated column (the same function, so the same
-- words), and the index is over the column: a search reads it instead.
--
-- The column is added by dynamic SQL so that sqlc, which reads this
-- directory as the schema, does not see it: every query that names
-- messages.* is expanded by sqlc to the columns it knows, so no read but
-- a search's ever fetches a message's vector (the size of its text again).
--
-- Adding it rewrites the table, computing every row's vector once: minutes
-- on a store of a million messages, under an exclusive lock.

-- +goose Up
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE 'ALTER TABLE messages ADD COLUMN words tsvector
        GENERATED ALWAYS AS (sessiondb_words(content, tool_name, tool_text)) STORED';
END
$$;
-- +goose StatementEnd
DROP INDEX messages_words;
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE 'CREATE INDEX messages_words ON messages USING gin (words)';
END
$$;
-- +goose StatementEnd
-- The planner's statistics for the new column (a search's plan depends on
-- how common its words are), rather than waiting for autovacuum — on a
-- store that has messages. Statistics of an empty table say it stays
-- empty: the append's counter UPDATE (SessionAddMessageCounts) was then
-- planned to read every message of the table, and each connection kept
-- that plan while the table grew (server CPU per append 660 -> 900 µs at
-- 3,000 messages, growing with the table). Autovacuum gathers them once
-- the table has rows.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT FROM messages) THEN
        EXECUTE 'ANALYZE messages';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP INDEX messages_words;
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE 'ALTER TABLE messages DROP COLUMN words';
END
$$;
-- +goose StatementEnd
CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name, tool_text));
