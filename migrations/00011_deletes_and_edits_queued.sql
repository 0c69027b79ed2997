-- Version 11: deletes and edits reach the full-text indexes through the
-- queue too, and the indexes keep no reference to the messages table.
--
-- Until now only inserts were queued: the delete and update triggers
-- removed a row's old words from both indexes inside the writer's
-- transaction, tokenising the old text again, so a DeleteSession of
-- thousands of messages held the writer, and every append behind it, for
-- as long as that took. Now the triggers only copy what the indexes hold
-- of the row — its id and old text — into fts_deleted, and an edited row
-- is queued again in fts_pending; the background indexer applies both in
-- its slices (db/ftsqueue.go). FTS5 forgets a row only when told its
-- exact old text, which is why the copy is kept: one per row (the first
-- change after the row was indexed is the text the index holds), and
-- only a row the index holds is forgotten.
--
-- The indexes become contentless (content = ''): they read nothing from
-- messages (Search cuts its snippets in Go from the message row), which
-- is the layout a second writer needs — an index in a file of its own
-- (docs/PERFORMANCE.md). Not contentless_delete: SQLite before 3.43
-- (Python's sqlite3 and the shell on many systems) could no longer
-- search the file.
--
-- Both queues are ordered by seq (the rowid: it only grows while the
-- queue holds entries, and each slice takes out what it applied in its
-- own transaction, so a seq used again after the queue emptied is never
-- mistaken for one applied; AUTOINCREMENT would add sqlite_sequence
-- bookkeeping to every append, and a build with it, and with slices that
-- read the queue twice, measured 10-15% fewer appends a second at 64
-- appenders, docs/PERFORMANCE.md). A row may be
-- queued in fts_pending more than once (edited twice): the indexer
-- indexes its current text once, and not while its old text still waits
-- in fts_deleted to be forgotten. Search answers a queued row from its
-- current text (db/search_tail.go) and never from the index.
--
-- The indexes are recreated and filled from every row, as in version 10
-- (10 s for 100,000 messages, holding the write lock), so the queue
-- starts empty and an index marked stale is current again.

-- +goose Up
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
-- A valid config row lets DROP TABLE connect to a damaged index (see
-- version 10).
CREATE TABLE IF NOT EXISTS messages_fts_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_config (k, v) VALUES ('version', 4);
CREATE TABLE IF NOT EXISTS messages_fts_trigram_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_trigram_config (k, v) VALUES ('version', 4);
DROP TABLE messages_fts;
DROP TABLE messages_fts_trigram;

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, tool_name, tool_text,
    content = '', tokenize = 'unicode61'
);

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content, tool_text,
    content = '', tokenize = 'trigram'
);

INSERT INTO messages_fts (rowid, content, tool_name, tool_text) SELECT id, content, tool_name, tool_text FROM messages;
INSERT INTO messages_fts_trigram (rowid, content, tool_text) SELECT id, content, tool_text FROM messages;
DELETE FROM meta WHERE key = 'fts_stale';

-- The insert trigger (version 5) fills the new table as it did the old.
DROP TABLE fts_pending;
CREATE TABLE fts_pending (
    seq       INTEGER PRIMARY KEY,
    id        INTEGER NOT NULL,
    queued_at INTEGER NOT NULL DEFAULT 0
);

-- queued_at before the text: reading it must not walk a long message's
-- overflow pages.
CREATE TABLE fts_deleted (
    seq       INTEGER PRIMARY KEY,
    id        INTEGER NOT NULL,
    queued_at INTEGER NOT NULL DEFAULT 0,
    content   TEXT    NOT NULL,
    tool_name TEXT,
    tool_text TEXT
);

CREATE INDEX fts_deleted_id ON fts_deleted (id);

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
 AND NOT EXISTS (SELECT 1 FROM fts_deleted WHERE id = old.id) BEGIN
    INSERT INTO fts_deleted (id, queued_at, content, tool_name, tool_text)
        VALUES (old.id, CAST(unixepoch('subsec') * 1000 AS INTEGER), old.content, old.tool_name, old.tool_text);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_text ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
 AND (old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name OR old.tool_text IS NOT new.tool_text) BEGIN
    INSERT INTO fts_deleted (id, queued_at, content, tool_name, tool_text)
        SELECT old.id, CAST(unixepoch('subsec') * 1000 AS INTEGER), old.content, old.tool_name, old.tool_text
        WHERE NOT EXISTS (SELECT 1 FROM fts_deleted WHERE id = old.id);
    INSERT INTO fts_pending (id, queued_at) VALUES (new.id, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE fts_deleted;
DROP TABLE fts_pending;
CREATE TABLE fts_pending (
    id INTEGER PRIMARY KEY NOT NULL
, queued_at INTEGER NOT NULL DEFAULT 0);
DROP TABLE messages_fts;
DROP TABLE messages_fts_trigram;

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, tool_name, tool_text,
    content = 'messages', content_rowid = 'id', tokenize = 'unicode61'
);

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content, tool_text,
    content = 'messages', content_rowid = 'id', tokenize = 'trigram'
);

INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
INSERT INTO messages_fts_trigram (messages_fts_trigram) VALUES ('rebuild');
DELETE FROM meta WHERE key = 'fts_stale';

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name, tool_text)
        SELECT 'delete', old.id, old.content, old.tool_name, old.tool_text
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content, tool_text)
        SELECT 'delete', old.id, old.content, old.tool_text
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id);
    DELETE FROM fts_pending WHERE id = old.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_text ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
 AND NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name, tool_text) VALUES ('delete', old.id, old.content, old.tool_name, old.tool_text);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content, tool_text) VALUES ('delete', old.id, old.content, old.tool_text);
    INSERT INTO messages_fts (rowid, content, tool_name, tool_text) VALUES (new.id, new.content, new.tool_name, new.tool_text);
    INSERT INTO messages_fts_trigram (rowid, content, tool_text) VALUES (new.id, new.content, new.tool_text);
END;
-- +goose StatementEnd
