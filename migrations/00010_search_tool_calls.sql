-- Version 10: tool calls are searchable — their function names and
-- arguments.
--
-- A call's arguments are often where the words a user remembers are (the
-- command an agent ran, the path it wrote, the query it sent), and only
-- content and tool name were indexed. messages.tool_text holds the
-- searchable text of a message's calls (each call's name and its
-- arguments as the model wrote them, one per line; NULL without calls),
-- computed by the domain (internal/searchtext.ToolText) on every insert,
-- so every engine indexes the same text. It is a column, not an
-- expression over tool_calls_json, because an external-content FTS5 table
-- reads its columns by name from the content table, and PostgreSQL's
-- index expressions cannot walk a JSON array either.
--
-- Both indexes take it as a column of their own, so a phrase never spans
-- content and tool text: the word index (words and phrases of the
-- arguments) and the trigram index (substrings, CJK in arguments). The
-- indexes are recreated with the column and rebuilt from every row; the
-- rows stored before this version get their tool text here, by the same
-- rule in SQL (but for a NUL, which ToolText makes a space and SQLite's
-- replace() cannot match: it stays, and separates words all the same).
-- The rebuild indexes every row, so the queue is emptied,
-- and an index marked stale is current again. It holds the write lock
-- for the whole rebuild: 10 s for 100,000 messages without calls, 25 s
-- for 100,000 a quarter of them calls (docs/PERFORMANCE.md), which is
-- why Open's patience does not bound a migration (db/migrate.go).

-- +goose Up
ALTER TABLE messages ADD COLUMN tool_text TEXT;

UPDATE messages SET tool_text = (
    SELECT group_concat(COALESCE(c.value ->> 'name', '') || char(10) || COALESCE(c.value ->> 'arguments', ''), char(10) ORDER BY c.key)
    FROM json_each(messages.tool_calls_json) c)
WHERE tool_calls_json IS NOT NULL AND json_valid(tool_calls_json) AND json_type(tool_calls_json) = 'array';

DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
-- DROP TABLE connects to an FTS5 table first, which reads its config
-- table: a damaged or missing version row would fail the upgrade, and
-- every Open after it, over an index this migration rebuilds anyway. A
-- valid version row (4, what FTS5 writes) lets the DROP go through.
CREATE TABLE IF NOT EXISTS messages_fts_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_config (k, v) VALUES ('version', 4);
CREATE TABLE IF NOT EXISTS messages_fts_trigram_config (k PRIMARY KEY, v) WITHOUT ROWID;
INSERT OR REPLACE INTO messages_fts_trigram_config (k, v) VALUES ('version', 4);
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
DELETE FROM fts_pending;
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

-- +goose Down
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
DROP TABLE messages_fts_trigram;

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, tool_name,
    content = 'messages', content_rowid = 'id', tokenize = 'unicode61'
);

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content,
    content = 'messages', content_rowid = 'id', tokenize = 'trigram'
);

INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
INSERT INTO messages_fts_trigram (messages_fts_trigram) VALUES ('rebuild');
DELETE FROM fts_pending;
DELETE FROM meta WHERE key = 'fts_stale';

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

ALTER TABLE messages DROP COLUMN tool_text;
