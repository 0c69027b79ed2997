-- Search: words through a tsvector GIN index, substrings (and scripts
-- written without spaces, which the word parser keeps as one token)
-- through a pg_trgm GIN index, both kept by the server in the writing
-- transaction (SQLite's FTS5 queue has no counterpart).
--
-- The word index normalises as SQLite's unicode61 tokenizer splits: every
-- run of characters that are neither letters nor digits separates words,
-- so foo.bar and foo-bar are the two words foo and bar on both engines
-- (PostgreSQL's parser alone keeps foo.bar as one token). Terms are
-- normalised by the same function (sessiondb_phrase).

-- +goose Up

-- Extensions are per database, while each store has a schema: they go in
-- public, for every store of the database, created under a database-wide
-- lock so that stores migrating at once do not race to create them.
SELECT pg_advisory_xact_lock(7170707263697369); -- 'sessiondb extensions'
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public;

-- sessiondb_fold is text as the word index sees it: diacritics removed
-- (café is cafe, as unicode61 folds them) and every run of characters that
-- are neither letters nor digits one space. sessiondb_words is what the
-- index holds (content and tool name, SQLite's messages_fts columns),
-- sessiondb_phrase what a term asks for. The bodies are SQL-standard, so
-- every name in them is bound when they are created, whatever the
-- caller's search_path; unaccent(regdictionary, text) is STABLE only
-- because a dictionary could change, and this one is fixed.
CREATE FUNCTION sessiondb_fold(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.regexp_replace(public.unaccent('public.unaccent'::regdictionary, t), '[^[:alnum:]]+', ' ', 'g');

CREATE FUNCTION sessiondb_words(content text, tool_name text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('pg_catalog.simple', sessiondb_fold(content || ' ' || COALESCE(tool_name, '')));

CREATE FUNCTION sessiondb_phrase(term text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.phraseto_tsquery('pg_catalog.simple', sessiondb_fold(term));

CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name));
CREATE INDEX messages_trigram ON messages USING gin (content public.gin_trgm_ops);

-- +goose Down
DROP INDEX messages_trigram;
DROP INDEX messages_words;
DROP FUNCTION sessiondb_phrase(text);
DROP FUNCTION sessiondb_words(text, text);
DROP FUNCTION sessiondb_fold(text);
