-- Version 4: new messages are indexed once per transaction, not once per
-- statement.
--
-- FTS5 flushes its pending index to disk whenever a savepoint opens, and
-- SQLite opens one for every statement that fires a trigger inside a
-- transaction: with the index written by the insert trigger, a
-- transaction of n messages wrote n index segments (and paid n merges),
-- so group commit saved fsyncs but none of the indexing. Now the insert
-- trigger only queues the new row's id in fts_pending, and the writer
-- (db/tx.go) indexes every queued row with one statement per index just
-- before its COMMIT, in the same transaction: the index is as current at
-- every commit as before, and a batch of n messages writes one segment.
--
-- A row updated or deleted while still queued has no index entries yet:
-- the update and delete triggers skip it (the queue entry of a deleted row
-- goes with it). Every rebuild empties the queue in its transaction — a
-- rebuild run by hand must too (DELETE FROM fts_pending), or the queued
-- rows are indexed twice. A writer that does not know the queue (the
-- sqlite3 shell) leaves its rows queued; the next sessiondb commit, or
-- Open, indexes them. From this version on sessiondb refuses a file
-- migrated past what it knows (ErrSchemaTooNew); earlier builds did not
-- check, and would leave their appends queued until a newer one commits.

-- +goose Up
CREATE TABLE fts_pending (
    id INTEGER PRIMARY KEY NOT NULL
);

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO fts_pending (id) VALUES (new.id);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name)
        SELECT 'delete', old.id, old.content, old.tool_name
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content)
        SELECT 'delete', old.id, old.content
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id);
    DELETE FROM fts_pending WHERE id = old.id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
 AND NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id) BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose Down
INSERT INTO messages_fts (rowid, content, tool_name)
    SELECT m.id, m.content, m.tool_name FROM fts_pending p JOIN messages m ON m.id = p.id;
INSERT INTO messages_fts_trigram (rowid, content)
    SELECT m.id, m.content FROM fts_pending p JOIN messages m ON m.id = p.id;
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE fts_pending;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd
