-- Version 18: the reference store's last fields (issue 34).
--
-- messages:
--   observed           1 for a message the agent only observed (a line of
--                      a group chat not addressed to it): kept and shown,
--                      never a turn the caller answered.
--   effect_disposition what a tool result did to the world, in the
--                      caller's words ("applied", "failed", …); tool rows
--                      only (store.NewMessage.EffectDisposition).
--   reasoning_content  a provider's reasoning_content, kept apart from
--                      reasoning (two providers' fields, not one).
-- sessions:
--   compression_fallback_streak  compressions in a row that fell back
--                      (store.CompressionFellBack); reaching the caller's
--                      limit starts the failure cooldown and resets it.
--   delegated_from     the parent a delegate was made for, kept when the
--                      parent link goes (parent_kind is cleared with the
--                      link): a delegate stays hidden from session lists.
--   root_started_at    when the conversation began: the compression
--                      root's started_at on a continuation, NULL on any
--                      other session (its own started_at). Session lists
--                      ordered by start read sessions_root_started.

-- +goose Up
ALTER TABLE messages ADD COLUMN observed INTEGER NOT NULL DEFAULT 0 CHECK (observed IN (0, 1));
ALTER TABLE messages ADD COLUMN effect_disposition TEXT;
ALTER TABLE messages ADD COLUMN reasoning_content TEXT;
ALTER TABLE sessions ADD COLUMN compression_fallback_streak INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN delegated_from TEXT;
ALTER TABLE sessions ADD COLUMN root_started_at INTEGER;
UPDATE sessions SET delegated_from = parent_session_id WHERE parent_kind = 'delegate';
WITH RECURSIVE chain (id, root_started, depth) AS (
    SELECT id, started_at, 0 FROM sessions
    WHERE parent_session_id IS NULL OR parent_kind IS NULL OR parent_kind <> 'compression'
    UNION ALL
    SELECT c.id, chain.root_started, chain.depth + 1 FROM sessions c
    JOIN chain ON c.parent_session_id = chain.id AND c.parent_kind = 'compression'
    WHERE chain.depth < 1000
)
UPDATE sessions SET root_started_at = (SELECT root_started FROM chain WHERE chain.id = sessions.id)
WHERE parent_kind = 'compression';
CREATE INDEX sessions_root_started ON sessions (COALESCE(root_started_at, started_at) DESC, id DESC);
-- Every writer of a parent link (create, import, link, orphaning) keeps
-- both: a delegate's mark is set with its link and outlives it; a
-- continuation takes its parent's conversation start, and a session that
-- stops being one starts its own. (A continuation's own continuations
-- keep the start they took: the conversation as it was.)
-- +goose StatementBegin
CREATE TRIGGER sessions_lineage_marks_insert AFTER INSERT ON sessions
WHEN new.parent_kind IN ('delegate', 'compression') BEGIN
    UPDATE sessions
    SET delegated_from = CASE WHEN new.parent_kind = 'delegate' THEN new.parent_session_id ELSE delegated_from END,
        root_started_at = CASE WHEN new.parent_kind = 'compression'
            THEN (SELECT COALESCE(p.root_started_at, p.started_at) FROM sessions p WHERE p.id = new.parent_session_id) END
    WHERE id = new.id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER sessions_lineage_marks_update AFTER UPDATE OF parent_kind, parent_session_id ON sessions BEGIN
    UPDATE sessions
    SET delegated_from = CASE WHEN new.parent_kind = 'delegate' THEN new.parent_session_id ELSE delegated_from END,
        root_started_at = CASE WHEN new.parent_kind = 'compression'
            THEN (SELECT COALESCE(p.root_started_at, p.started_at) FROM sessions p WHERE p.id = new.parent_session_id) END
    WHERE id = new.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER sessions_lineage_marks_update;
DROP TRIGGER sessions_lineage_marks_insert;
DROP INDEX sessions_root_started;
ALTER TABLE sessions DROP COLUMN root_started_at;
ALTER TABLE sessions DROP COLUMN delegated_from;
ALTER TABLE sessions DROP COLUMN compression_fallback_streak;
ALTER TABLE messages DROP COLUMN reasoning_content;
ALTER TABLE messages DROP COLUMN effect_disposition;
ALTER TABLE messages DROP COLUMN observed;
