-- The listing's order out of the sessions row, so that an append's update
-- of its session is HOT (issue 33). The listing (pg/queries/sidebar.sql)
-- orders by a conversation's last activity, which every append moves
-- (conversation_active_at); while an index of sessions named that column,
-- every append wrote a new version of its session's row into each index
-- of the table (a non-HOT update: ~13% of the server's CPU an
-- append, docs/PERFORMANCE.md). Now no index of sessions names a column an
-- append changes: the listing's index is on session_activity, one row a
-- session holding its activity rounded down to ten seconds
-- (active_bucket), which an append changes at most once in ten seconds.
-- The listing walks that index newest bucket first and orders each
-- bucket's sessions by their exact activity (an incremental sort): the
-- same order as before, since the bucket never decreases as the activity
-- grows.
--
-- A trigger keeps the bucket, so that every writer of a session (create,
-- copy, import, an append, a recount, a heartbeat, the trigger for other
-- writers' messages) keeps it too; its WHEN clause is evaluated by the
-- server without calling the function, so an append within the bucket
-- runs no function. The row follows its session's locks: it is written
-- only by a transaction that has just written its session's row.

-- +goose Up
CREATE TABLE session_activity (
    session_id    text COLLATE "C" PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    active_bucket bigint NOT NULL
);
INSERT INTO session_activity (session_id, active_bucket)
SELECT id, COALESCE(conversation_active_at, started_at) / 10000 FROM sessions;
CREATE INDEX session_activity_recent ON session_activity (active_bucket DESC, session_id DESC);
DROP INDEX sessions_conversation_active;

-- +goose StatementBegin
CREATE FUNCTION sessions_activity_bucket() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO session_activity (session_id, active_bucket)
    VALUES (NEW.id, COALESCE(NEW.conversation_active_at, NEW.started_at) / 10000)
    ON CONFLICT (session_id) DO UPDATE SET active_bucket = EXCLUDED.active_bucket;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER sessions_activity_insert AFTER INSERT ON sessions
    FOR EACH ROW EXECUTE FUNCTION sessions_activity_bucket();
CREATE TRIGGER sessions_activity_update AFTER UPDATE OF conversation_active_at, started_at ON sessions
    FOR EACH ROW
    WHEN (COALESCE(NEW.conversation_active_at, NEW.started_at) / 10000
          IS DISTINCT FROM COALESCE(OLD.conversation_active_at, OLD.started_at) / 10000)
    EXECUTE FUNCTION sessions_activity_bucket();

-- +goose Down
DROP TRIGGER sessions_activity_update ON sessions;
DROP TRIGGER sessions_activity_insert ON sessions;
DROP FUNCTION sessions_activity_bucket();
CREATE INDEX sessions_conversation_active ON sessions (COALESCE(conversation_active_at, started_at) DESC, id DESC);
DROP TABLE session_activity;
