-- Version 12: a new message is queued for the full-text indexes by its id
-- alone. The indexes hold no message past fts_mark.indexed_through; the
-- messages past it are the queue of new rows, in id order, and an append
-- writes nothing for the indexes but, once after the indexer last caught
-- up, the time it fell behind.
--
-- Until now every insert also queued its id in fts_pending: a row in
-- another table, one more page in every append's commit (a serial append
-- wrote 6.67 WAL frames, and its fsync costs more the more it writes),
-- and a row the indexer then had to delete. A message id only grows
-- (AUTOINCREMENT: never used again, even after the newest row is
-- deleted), and rows are inserted by the one writer in id order, so one
-- number says which rows are indexed: the indexer indexes the messages
-- past the mark, oldest first, and moves the mark in the same
-- transaction. The same number is what a second writer, the indexes in a
-- file of their own, records as applied (docs/PERFORMANCE.md).
--
-- fts_pending keeps the edited rows (an edit of a row past the mark
-- queues nothing: the indexer will read its current text), and
-- fts_deleted the old text of deleted and edited rows at or below the
-- mark (a row past it is in no index, so there is nothing to forget).
--
-- behind_since is when the first message past the mark was appended after
-- the indexer last caught up (Unix ms, 0: caught up). Stats.IndexLag and
-- the indexer's catch-up take the first waiting message's created_at (its
-- append's own time) but no earlier than behind_since: an imported
-- message's created_at is old, and it has waited only since its append.
--
-- Every row now in the file is at or below the mark: indexed, or queued in
-- fts_pending by the insert trigger this version drops, where the indexer
-- still finds it. Nothing is rebuilt.

-- +goose Up
CREATE TABLE fts_mark (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through INTEGER NOT NULL,
    behind_since    INTEGER NOT NULL DEFAULT 0
);

INSERT INTO fts_mark (id, indexed_through) VALUES (1, COALESCE((SELECT MAX(id) FROM messages), 0));

DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_behind AFTER INSERT ON messages
WHEN (SELECT behind_since FROM fts_mark) = 0 BEGIN
    UPDATE fts_mark SET behind_since = CAST(unixepoch('subsec') * 1000 AS INTEGER);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
 AND old.id <= (SELECT indexed_through FROM fts_mark)
 AND NOT EXISTS (SELECT 1 FROM fts_deleted WHERE id = old.id) BEGIN
    INSERT INTO fts_deleted (id, queued_at, content, tool_name, tool_text)
        VALUES (old.id, CAST(unixepoch('subsec') * 1000 AS INTEGER), old.content, old.tool_name, old.tool_text);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name, tool_text ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
 AND old.id <= (SELECT indexed_through FROM fts_mark)
 AND (old.content IS NOT new.content OR old.tool_name IS NOT new.tool_name OR old.tool_text IS NOT new.tool_text) BEGIN
    INSERT INTO fts_deleted (id, queued_at, content, tool_name, tool_text)
        SELECT old.id, CAST(unixepoch('subsec') * 1000 AS INTEGER), old.content, old.tool_name, old.tool_text
        WHERE NOT EXISTS (SELECT 1 FROM fts_deleted WHERE id = old.id);
    INSERT INTO fts_pending (id, queued_at) VALUES (new.id, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
-- +goose StatementEnd

-- +goose Down
-- The rows past the mark go back into fts_pending, which version 11
-- indexes from.
INSERT INTO fts_pending (id, queued_at)
    SELECT id, CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM messages
    WHERE id > (SELECT indexed_through FROM fts_mark)
      AND NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale')
    ORDER BY id;

DROP TRIGGER messages_fts_behind;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE fts_mark;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO fts_pending (id, queued_at) VALUES (new.id, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
-- +goose StatementEnd

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
