-- The reference store's last fields (issue 34), as SQLite's version 18
-- (migrations/00018_reference_fields.sql says what each holds).

-- +goose Up
ALTER TABLE messages
    ADD COLUMN observed bigint NOT NULL DEFAULT 0 CHECK (observed IN (0, 1)),
    ADD COLUMN effect_disposition text,
    ADD COLUMN reasoning_content text;
ALTER TABLE sessions
    ADD COLUMN compression_fallback_streak bigint NOT NULL DEFAULT 0,
    ADD COLUMN delegated_from text COLLATE "C",
    ADD COLUMN root_started_at bigint;
UPDATE sessions SET delegated_from = parent_session_id WHERE parent_kind = 'delegate';
WITH RECURSIVE chain (id, root_started, depth) AS (
    SELECT id, started_at, 0 FROM sessions
    WHERE parent_session_id IS NULL OR parent_kind IS NULL OR parent_kind <> 'compression'
    UNION ALL
    SELECT c.id, chain.root_started, chain.depth + 1 FROM sessions c
    JOIN chain ON c.parent_session_id = chain.id AND c.parent_kind = 'compression'
    WHERE chain.depth < 1000
)
UPDATE sessions SET root_started_at = chain.root_started FROM chain
WHERE chain.id = sessions.id AND sessions.parent_kind = 'compression';
CREATE INDEX sessions_root_started ON sessions (COALESCE(root_started_at, started_at) DESC, id DESC);
-- Every writer of a parent link (create, import, link, orphaning) keeps
-- both, as SQLite's triggers do. Only a statement that sets parent_kind
-- or parent_session_id runs it: an append's counter update does not.
-- +goose StatementBegin
CREATE FUNCTION sessions_lineage_marks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.parent_kind = 'delegate' THEN
        NEW.delegated_from := NEW.parent_session_id;
    END IF;
    IF NEW.parent_kind = 'compression' THEN
        NEW.root_started_at := (SELECT COALESCE(p.root_started_at, p.started_at) FROM sessions p
                                WHERE p.id = NEW.parent_session_id);
    ELSE
        NEW.root_started_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER sessions_lineage_marks BEFORE INSERT OR UPDATE OF parent_kind, parent_session_id ON sessions
    FOR EACH ROW EXECUTE FUNCTION sessions_lineage_marks();

-- +goose Down
DROP TRIGGER sessions_lineage_marks ON sessions;
DROP FUNCTION sessions_lineage_marks();
DROP INDEX sessions_root_started;
ALTER TABLE sessions
    DROP COLUMN root_started_at,
    DROP COLUMN delegated_from,
    DROP COLUMN compression_fallback_streak;
ALTER TABLE messages
    DROP COLUMN reasoning_content,
    DROP COLUMN effect_disposition,
    DROP COLUMN observed;
