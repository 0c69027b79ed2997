-- Search: words through a tsvector GIN index, substrings (and scripts
-- written without spaces, which the word parser keeps as one token)
-- through a pg_trgm GIN index, both kept by the server in the writing
-- transaction (SQLite's FTS5 queue has no counterpart).
--
-- The word index normalises as SQLite's unicode61 tokenizer splits: every
-- run of characters that are neither letters nor digits separates words,
-- so foo.bar and foo-bar are the two words foo and bar on both engines
-- (PostgreSQL's parser alone keeps foo.bar as one token). The query side
-- (pg/search.go) normalises its terms the same way.

-- +goose Up

-- Extensions are per database, while each store has a schema: they go in
-- public, for every store of the database, created under a database-wide
-- lock so that stores migrating at once do not race to create them.
SELECT pg_advisory_xact_lock(7170707263697369); -- 'sessiondb extensions'
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;

-- sessiondb_words is the text the word index holds: content and tool name
-- (SQLite's messages_fts columns), normalised as above. Its body names
-- pg_catalog so that it means the same whatever the caller's search_path.
CREATE FUNCTION sessiondb_words(content text, tool_name text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('pg_catalog.simple',
    pg_catalog.regexp_replace(content || ' ' || COALESCE(tool_name, ''), '[^[:alnum:]]+', ' ', 'g'));

CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name));
CREATE INDEX messages_trigram ON messages USING gin (content public.gin_trgm_ops);

-- +goose Down
DROP INDEX messages_trigram;
DROP INDEX messages_words;
DROP FUNCTION sessiondb_words(text, text);
