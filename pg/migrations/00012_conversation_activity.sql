-- As SQLite's migration 23: a conversation's last activity, and archives
-- a sweep made (issue 35, the reference's digest §9 and §10).
--
-- conversation_active_at is when the conversation a session carries was
-- last active, up to that session: the newest message or heartbeat of the
-- session and of its compression ancestors, never before its start. The
-- engine's appends move it in the statement that already moves
-- last_message_at (SessionAddMessageCounts, SessionRecount), another
-- writer's rows through the trigger; the store recomputes it when a
-- compression link changes. It replaces last_message_at in the listing's
-- index, so an append still updates one index entry of its session.
--
-- auto_archived marks an archive the idle sweep made (archived = 1 too):
-- new activity takes such an archive back, never one a person made.
--
-- tool_ended_at and tool_duration_ms: when a tool result's call ended and
-- how long it ran, NULL when the caller did not say; every copy keeps them.

-- +goose Up
ALTER TABLE messages ADD COLUMN tool_ended_at bigint;
ALTER TABLE messages ADD COLUMN tool_duration_ms bigint;
ALTER TABLE sessions ADD COLUMN conversation_active_at bigint;
ALTER TABLE sessions ADD COLUMN auto_archived bigint NOT NULL DEFAULT 0 CHECK (auto_archived IN (0, 1));

UPDATE sessions SET conversation_active_at = GREATEST(started_at, last_message_at, last_activity_at);

WITH RECURSIVE chain (id, at, depth) AS (
    SELECT s.id, s.conversation_active_at, 0 FROM sessions s
    WHERE s.parent_session_id IS NULL OR s.parent_kind IS DISTINCT FROM 'compression'
    UNION ALL
    SELECT c.id, GREATEST(chain.at, c.conversation_active_at), chain.depth + 1
    FROM sessions c JOIN chain ON c.parent_session_id = chain.id AND c.parent_kind = 'compression'
    WHERE chain.depth < 1000
), folded AS (SELECT id, max(at) AS at FROM chain GROUP BY id)
UPDATE sessions SET conversation_active_at = folded.at
FROM folded WHERE folded.id = sessions.id AND sessions.parent_kind = 'compression';

DROP INDEX sessions_last_active;
CREATE INDEX sessions_conversation_active ON sessions (COALESCE(conversation_active_at, started_at) DESC, id DESC);

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION messages_last_message_at() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE sessions SET last_message_at = NEW.created_at,
        conversation_active_at = GREATEST(COALESCE(conversation_active_at, started_at), NEW.created_at)
    WHERE id = NEW.session_id AND (last_message_at IS NULL OR last_message_at < NEW.created_at);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION messages_last_message_at() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE sessions SET last_message_at = NEW.created_at
    WHERE id = NEW.session_id AND (last_message_at IS NULL OR last_message_at < NEW.created_at);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP INDEX sessions_conversation_active;
CREATE INDEX sessions_last_active ON sessions (COALESCE(last_message_at, started_at) DESC, id DESC);
ALTER TABLE sessions DROP COLUMN auto_archived;
ALTER TABLE sessions DROP COLUMN conversation_active_at;
ALTER TABLE messages DROP COLUMN tool_duration_ms;
ALTER TABLE messages DROP COLUMN tool_ended_at;
