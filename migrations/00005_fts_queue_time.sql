-- Version 5: the index queue records when each row was queued.
--
-- Appends no longer index in their own transaction: the writer's
-- background indexer (db/ftsindexer.go) indexes the queue in transactions
-- of its own, and Search covers the rows still queued (db/search_tail.go).
-- queued_at (Unix milliseconds, the clock of the process that appended)
-- is how long a row has waited: Stats reports the oldest row's wait (the
-- indexer's lag), and the indexer stops yielding to appends when a row
-- has waited too long. A message's own created_at cannot say it: imports
-- and compaction insert rows with their original times.

-- +goose Up
ALTER TABLE fts_pending ADD COLUMN queued_at INTEGER NOT NULL DEFAULT 0;

DROP TRIGGER messages_fts_insert;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO fts_pending (id, queued_at) VALUES (new.id, CAST(unixepoch('subsec') * 1000 AS INTEGER));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_fts_insert;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale') BEGIN
    INSERT INTO fts_pending (id) VALUES (new.id);
END;
-- +goose StatementEnd

ALTER TABLE fts_pending DROP COLUMN queued_at;
