-- Tool calls are searchable: their function names and arguments, as on
-- SQLite (its migration 10 says why). messages.tool_text is the
-- searchable text of a message's calls, computed by the domain
-- (internal/searchtext.ToolText) on every insert; the rows stored before
-- this version get it here by the same rule (a call's name, a newline,
-- its arguments; a newline between calls; a NUL as a space). The word index covers
-- content, tool name and tool text; the substring index gains the tool
-- text beside the content (a term matches in either).

-- +goose Up
ALTER TABLE messages ADD COLUMN tool_text text;

UPDATE messages SET tool_text = (
    SELECT string_agg(COALESCE(c.call ->> 'name', '') || E'\n' || COALESCE(c.call ->> 'arguments', ''), E'\n' ORDER BY c.n)
    -- A NUL in a call is \u0000 in the JSON, which ->> cannot turn into
    -- text: it is searched as a space, as ToolText makes it.
    FROM json_array_elements(replace(messages.tool_calls_json, '\u0000', '\u0020')::json) WITH ORDINALITY AS c(call, n))
WHERE tool_calls_json IS NOT NULL AND json_typeof(tool_calls_json::json) = 'array';

DROP INDEX messages_words;

CREATE FUNCTION sessiondb_words(content text, tool_name text, tool_text text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('pg_catalog.simple',
    sessiondb_fold(content || ' ' || COALESCE(tool_name, '') || ' ' || COALESCE(tool_text, '')));

DROP FUNCTION sessiondb_words(text, text);

CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name, tool_text));
CREATE INDEX messages_tool_trigram ON messages USING gin (tool_text public.gin_trgm_ops);

-- +goose Down
DROP INDEX messages_tool_trigram;
DROP INDEX messages_words;
DROP FUNCTION sessiondb_words(text, text, text);

CREATE FUNCTION sessiondb_words(content text, tool_name text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('pg_catalog.simple', sessiondb_fold(content || ' ' || COALESCE(tool_name, '')));

CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name));
ALTER TABLE messages DROP COLUMN tool_text;
