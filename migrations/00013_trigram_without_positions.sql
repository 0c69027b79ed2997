-- Version 13: the trigram index keeps no positions (detail = 'none').
--
-- A positional trigram index stores every character's position: at
-- agents' message sizes it was 2.8 times the text it indexed (53 MB for
-- 60,000 messages of 10-40 words, 29 MB without positions, the table
-- included), and building it was the largest part of indexing a message.
-- Without positions it still says which messages hold every trigram of a
-- term; whether they stand side by side — the term itself — is decided on
-- the candidate's text by sessiondb_trigram_match (db/sqlfuncs.go), with
-- the tokenizer's own folding, so Search matches exactly what it matched
-- before. Its bm25 is 0 without positions: the trigram route ranks by
-- sessiondb_trigram_score instead (internal/searchtext/trigram_score.go).
--
-- The new index is filled with exactly what the old one held, so the
-- queue stays valid: every row at or below the mark, except those whose
-- old text waits in fts_deleted (the index holds that text, and the
-- deleted rows' too) and those queued in fts_pending without it (not
-- indexed yet). An index marked stale is left empty: the next writable
-- open rebuilds both. The word index is not touched. Filling costs what
-- indexing every message into the trigram index costs, once, holding the
-- write lock.
--
-- Tools that query the index with an older SQLite (Python's sqlite3, the
-- shell) get "phrase queries are not supported (detail!=full)" for a term
-- of more than three characters; sessiondb never sends one.

-- +goose Up
-- A valid config row lets DROP TABLE connect to a damaged index (see
-- version 10).
CREATE TABLE IF NOT EXISTS messages_fts_trigram_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_trigram_config (k, v) VALUES ('version', 4);
DROP TABLE messages_fts_trigram;

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content, tool_text,
    content = '', tokenize = 'trigram', detail = 'none'
);

INSERT INTO messages_fts_trigram (rowid, content, tool_text)
SELECT id, content, tool_text FROM messages
WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
  AND id <= (SELECT indexed_through FROM fts_mark)
  AND id NOT IN (SELECT id FROM fts_pending)
  AND id NOT IN (SELECT id FROM fts_deleted)
UNION ALL
SELECT id, content, tool_text FROM fts_deleted
WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale');

-- +goose Down
CREATE TABLE IF NOT EXISTS messages_fts_trigram_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_trigram_config (k, v) VALUES ('version', 4);
DROP TABLE messages_fts_trigram;

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content, tool_text,
    content = '', tokenize = 'trigram'
);

INSERT INTO messages_fts_trigram (rowid, content, tool_text)
SELECT id, content, tool_text FROM messages
WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
  AND id <= (SELECT indexed_through FROM fts_mark)
  AND id NOT IN (SELECT id FROM fts_pending)
  AND id NOT IN (SELECT id FROM fts_deleted)
UNION ALL
SELECT id, content, tool_text FROM fts_deleted
WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale');
