-- Version 8: sessions know when their newest message arrived.
--
-- A session picker lists conversations by last activity — the newest
-- message, not the start — and pages through them by that order, so the
-- time must be a column with an index, not a MAX over messages per row.
-- A trigger keeps it, so every writer (appends, imports, continuations,
-- another program) moves it; it only moves forward. NULL means the
-- session has no message yet: it was last active when it started.

-- +goose Up
ALTER TABLE sessions ADD COLUMN last_message_at INTEGER;

UPDATE sessions SET last_message_at = (SELECT MAX(m.created_at) FROM messages m WHERE m.session_id = sessions.id);

CREATE INDEX sessions_last_active ON sessions (COALESCE(last_message_at, started_at) DESC, id DESC);

-- +goose StatementBegin
CREATE TRIGGER messages_last_message_at AFTER INSERT ON messages
BEGIN
    UPDATE sessions SET last_message_at = new.created_at
    WHERE id = new.session_id AND (last_message_at IS NULL OR last_message_at < new.created_at);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_last_message_at;
DROP INDEX sessions_last_active;
ALTER TABLE sessions DROP COLUMN last_message_at;
