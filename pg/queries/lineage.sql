-- Lineage: parent_session_id chains. A conversation continues through
-- compression children (parent_kind = 'compression'); branches, delegates,
-- resets and tool sessions start conversations of their own.

-- name: SessionConversationRoot :one
-- The first session of id's conversation: up through compression links,
-- at most 1000 steps (the lineage walk's cap, so every member of one
-- conversation names the same root; a cycle cannot loop forever).
WITH RECURSIVE up (id, parent_id, kind, depth) AS (
    SELECT s.id, s.parent_session_id, s.parent_kind, 0 FROM sessions s WHERE s.id = sqlc.arg(id)
    UNION ALL
    SELECT p.id, p.parent_session_id, p.parent_kind, up.depth + 1
    FROM sessions p JOIN up ON p.id = up.parent_id
    WHERE up.kind = 'compression' AND up.depth < 1000
)
SELECT CAST(id AS TEXT) FROM up ORDER BY depth DESC LIMIT 1;

-- name: SessionAncestors :many
-- id's compression ancestors, nearest first, at most 1000.
WITH RECURSIVE up (id, parent_id, kind, depth) AS (
    SELECT s.id, s.parent_session_id, s.parent_kind, 0 FROM sessions s WHERE s.id = sqlc.arg(id)
    UNION ALL
    SELECT p.id, p.parent_session_id, p.parent_kind, up.depth + 1
    FROM sessions p JOIN up ON p.id = up.parent_id
    WHERE up.kind = 'compression' AND up.depth < 1000
)
SELECT CAST(id AS TEXT) FROM up WHERE depth > 0 ORDER BY depth ASC;

-- name: SessionContinuation :one
-- The compression child that carries id's conversation on. Normally there is
-- one; when there are several, prefer one that itself continues, then a
-- live one, then the newest.
SELECT c.id FROM sessions c
WHERE c.parent_session_id = sqlc.arg(id) AND c.parent_kind = 'compression'
ORDER BY EXISTS (SELECT 1 FROM sessions g WHERE g.parent_session_id = c.id AND g.parent_kind = 'compression') DESC,
         (c.ended_at IS NULL) DESC, c.started_at DESC, c.id DESC
LIMIT 1;

-- name: SessionChildren :many
SELECT id, parent_kind FROM sessions WHERE parent_session_id = sqlc.arg(id) ORDER BY id;
