-- Version 13: the trigram index keeps no positions (detail = 'none').
--
-- A positional trigram index stores every character's position: for
-- 20,000 messages of about 1,000 bytes it took 61.6 MB of a 105.7 MB file
-- (12.3 MB without positions, the file 53.3 MB), and building it was the
-- largest part of indexing a message.
-- Without positions it still says which messages hold every trigram of a
-- term; whether they stand side by side — the term itself — is decided on
-- the candidate's text by sessiondb_trigram_match (db/sqlfuncs.go), with
-- the tokenizer's own folding, so Search matches exactly what it matched
-- before. Its bm25 is 0 without positions: the trigram route ranks by
-- sessiondb_trigram_score instead (internal/searchtext/trigram_score.go).
--
-- The new index is filled with exactly what the old one held, so the
-- queue stays valid: the documents the word index holds (the indexer and
-- every rebuild write both indexes in one transaction, so they hold the
-- same messages), each with the text the old index held — the old text
-- waiting in fts_deleted for a row changed or deleted since it was
-- indexed (the first such copy), else the row's own. An index marked
-- stale is left empty: the next writable open rebuilds both. The word
-- index is not touched. Filling costs what indexing every message into
-- the trigram index costs, once, holding the write lock.
--
-- Any SQLite (Python's sqlite3, the shell, the driver itself) refuses a
-- quoted term of more than three characters on this index: "phrase
-- queries are not supported (detail!=full)". sessiondb never sends one.

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
SELECT z.id,
       CASE WHEN d.id IS NOT NULL THEN d.content ELSE m.content END,
       CASE WHEN d.id IS NOT NULL THEN d.tool_text ELSE m.tool_text END
FROM messages_fts_docsize z
LEFT JOIN (SELECT id, content, tool_text, MIN(seq) FROM fts_deleted GROUP BY id) d ON d.id = z.id
LEFT JOIN messages m ON m.id = z.id
WHERE (d.id IS NOT NULL OR m.id IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale');

-- +goose Down
CREATE TABLE IF NOT EXISTS messages_fts_trigram_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_trigram_config (k, v) VALUES ('version', 4);
DROP TABLE messages_fts_trigram;

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content, tool_text,
    content = '', tokenize = 'trigram'
);

INSERT INTO messages_fts_trigram (rowid, content, tool_text)
SELECT z.id,
       CASE WHEN d.id IS NOT NULL THEN d.content ELSE m.content END,
       CASE WHEN d.id IS NOT NULL THEN d.tool_text ELSE m.tool_text END
FROM messages_fts_docsize z
LEFT JOIN (SELECT id, content, tool_text, MIN(seq) FROM fts_deleted GROUP BY id) d ON d.id = z.id
LEFT JOIN messages m ON m.id = z.id
WHERE (d.id IS NOT NULL OR m.id IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale');
