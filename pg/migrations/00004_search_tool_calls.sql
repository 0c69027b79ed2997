-- Tool calls are searchable: their function names and arguments, as on
-- SQLite (its migration 10 says why). messages.tool_text is the
-- searchable text of a message's calls, computed by the domain
-- (internal/searchtext.ToolText) on every insert; the rows stored before
-- this version get it here by the same rule (a call's name, a newline,
-- its arguments; a newline between calls; a NUL as a space). The word index covers
-- content, tool name and tool text; the substring index gains the tool
-- text beside the content (a term matches in either).
--
-- A phrase matches within one field, as SQLite's FTS5 columns keep it: the
-- word vector weighs each field's words (content A, tool name B, tool text
-- C), and a term of several words asks for them as a phrase of one weight
-- (sessiondb_match). A term of one word asks for it unweighted, so the
-- index answers it without rereading the rows.

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
RETURN pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.simple', sessiondb_fold(content)), 'A')
    || pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.simple', sessiondb_fold(COALESCE(tool_name, ''))), 'B')
    || pg_catalog.setweight(pg_catalog.to_tsvector('pg_catalog.simple', sessiondb_fold(COALESCE(tool_text, ''))), 'C');

DROP FUNCTION sessiondb_words(text, text);

-- sessiondb_weighted is phrase q restricted to words of one weight: each
-- lexeme of its text form (quoted, a quote doubled) gains the weight, and
-- the text is read back as a tsquery, which takes lexemes as written.
CREATE FUNCTION sessiondb_weighted(q tsquery, weight text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CAST(pg_catalog.regexp_replace(CAST(q AS text), '(''(?:[^'']|'''')*'')', '\1:' || weight, 'g') AS pg_catalog.tsquery);

-- sessiondb_match is what a term matches in sessiondb_words: its words as
-- a phrase within the content, a tool name or a tool text. sessiondb_phrase
-- (every field alike) stays the query ranks are computed by.
CREATE FUNCTION sessiondb_match(term text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.numnode(sessiondb_phrase(term)) <= 1 THEN sessiondb_phrase(term)
    ELSE sessiondb_weighted(sessiondb_phrase(term), 'A')
        || sessiondb_weighted(sessiondb_phrase(term), 'B')
        || sessiondb_weighted(sessiondb_phrase(term), 'C') END;

CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name, tool_text));
CREATE INDEX messages_tool_trigram ON messages USING gin (tool_text public.gin_trgm_ops);

-- +goose Down
DROP INDEX messages_tool_trigram;
DROP INDEX messages_words;
DROP FUNCTION sessiondb_match(text);
DROP FUNCTION sessiondb_weighted(tsquery, text);
DROP FUNCTION sessiondb_words(text, text, text);

CREATE FUNCTION sessiondb_words(content text, tool_name text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.to_tsvector('pg_catalog.simple', sessiondb_fold(content || ' ' || COALESCE(tool_name, '')));

CREATE INDEX messages_words ON messages USING gin (sessiondb_words(content, tool_name));
ALTER TABLE messages DROP COLUMN tool_text;
