-- Version 2: the FTS triggers stand down while the index is marked stale.
--
-- When a write finds the full-text index damaged (SQLITE_CORRUPT_VTAB), the
-- store marks it stale (meta key 'fts_stale') in its own transaction and
-- the write goes through without indexing: losing a turn to a broken
-- search index would be the wrong trade. The next writable open rebuilds
-- both indexes from the messages table and clears the mark.

-- +goose Up
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

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

-- +goose Down
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd
