-- Version 23: a conversation's last activity, and archives a sweep made
-- (issue 35, the reference's digest §9 and §10).
--
-- conversation_active_at is when the conversation a session carries was
-- last active, up to that session: the newest message or heartbeat
-- (last_activity_at) of the session and of its compression ancestors, and
-- never before the session's start. A compression tip, the session a
-- conversation listing shows, so sorts by the newest activity anywhere in
-- its chain. Appends move it in the statement that already moves
-- last_message_at (the trigger below), heartbeats in theirs; the store
-- recomputes it when a compression link changes (publish, delete,
-- import's links: store/conversationactivity.go). NULL: the session's
-- start. It replaces last_message_at in the listing's index, so an append
-- still updates one index entry of its session.
--
-- auto_archived marks an archive the idle sweep made (archived = 1 too):
-- new activity takes such an archive back, never one a person made.
--
-- tool_ended_at and tool_duration_ms: when a tool result's call ended and
-- how long it ran (digest §1 tool timing), NULL when the caller did not
-- say; every copy of the row keeps them.

-- +goose Up
ALTER TABLE messages ADD COLUMN tool_ended_at INTEGER;
ALTER TABLE messages ADD COLUMN tool_duration_ms INTEGER;
ALTER TABLE sessions ADD COLUMN conversation_active_at INTEGER;
ALTER TABLE sessions ADD COLUMN auto_archived INTEGER NOT NULL DEFAULT 0 CHECK (auto_archived IN (0, 1));

UPDATE sessions SET conversation_active_at = MAX(started_at, COALESCE(last_message_at, 0), COALESCE(last_activity_at, 0));

CREATE TEMP TABLE conversation_activity_backfill AS
WITH RECURSIVE chain (id, at, depth) AS (
    SELECT s.id, s.conversation_active_at, 0 FROM sessions s
    WHERE s.parent_session_id IS NULL OR s.parent_kind IS NOT 'compression'
    UNION ALL
    SELECT c.id, MAX(chain.at, c.conversation_active_at), chain.depth + 1
    FROM sessions c JOIN chain ON c.parent_session_id = chain.id AND c.parent_kind = 'compression'
    WHERE chain.depth < 1000
)
SELECT id, MAX(at) AS at FROM chain GROUP BY id;

UPDATE sessions SET conversation_active_at = COALESCE(
    (SELECT b.at FROM conversation_activity_backfill b WHERE b.id = sessions.id), conversation_active_at)
WHERE parent_kind = 'compression';

DROP TABLE conversation_activity_backfill;

DROP INDEX sessions_last_active;
CREATE INDEX sessions_conversation_active ON sessions (COALESCE(conversation_active_at, started_at) DESC, id DESC);

DROP TRIGGER messages_last_message_at;
-- +goose StatementBegin
CREATE TRIGGER messages_last_message_at AFTER INSERT ON messages
BEGIN
    UPDATE sessions SET last_message_at = new.created_at,
        conversation_active_at = MAX(COALESCE(conversation_active_at, started_at), new.created_at)
    WHERE id = new.session_id AND (last_message_at IS NULL OR last_message_at < new.created_at);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER messages_last_message_at;
-- +goose StatementBegin
CREATE TRIGGER messages_last_message_at AFTER INSERT ON messages
BEGIN
    UPDATE sessions SET last_message_at = new.created_at
    WHERE id = new.session_id AND (last_message_at IS NULL OR last_message_at < new.created_at);
END;
-- +goose StatementEnd
DROP INDEX sessions_conversation_active;
CREATE INDEX sessions_last_active ON sessions (COALESCE(last_message_at, started_at) DESC, id DESC);
ALTER TABLE sessions DROP COLUMN auto_archived;
ALTER TABLE sessions DROP COLUMN conversation_active_at;
ALTER TABLE messages DROP COLUMN tool_duration_ms;
ALTER TABLE messages DROP COLUMN tool_ended_at;
