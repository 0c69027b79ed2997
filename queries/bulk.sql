-- Bulk operations: candidates by filter, in id order from a cursor, so a
-- run works in batches and a crashed run started again continues.

-- name: SessionBulkCandidates :many
-- last_alive is the last sign of life: the end, the latest activity, the
-- newest message, or the start.
SELECT s.id, s.parent_session_id, s.parent_kind, s.pinned, s.archived, s.ended_at,
       CAST(MAX(COALESCE(s.ended_at, s.started_at), COALESCE(s.last_activity_at, 0),
           COALESCE((SELECT m.created_at FROM messages m WHERE m.session_id = s.id ORDER BY m.id DESC LIMIT 1), 0))
           AS INTEGER) AS last_alive,
       CAST(EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) AS INTEGER) AS has_messages
FROM sessions s
WHERE s.id > sqlc.arg(after_id)
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.arg(ended_only) AS INTEGER) = 0 OR s.ended_at IS NOT NULL)
  AND (CAST(sqlc.arg(archived_only) AS INTEGER) = 0 OR s.archived = 1)
  AND (CAST(sqlc.arg(empty_only) AS INTEGER) = 0
       OR NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id))
ORDER BY s.id
LIMIT sqlc.arg(row_limit);

-- name: SessionBulkFacts :one
-- What the sparing rules weigh about one session.
SELECT s.id, s.source, s.pinned, s.archived, s.auto_archived, s.ended_at,
       CAST(MAX(COALESCE(s.ended_at, s.started_at), COALESCE(s.last_activity_at, 0),
           COALESCE((SELECT m.created_at FROM messages m WHERE m.session_id = s.id ORDER BY m.id DESC LIMIT 1), 0))
           AS INTEGER) AS last_alive,
       CAST(EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) AS INTEGER) AS has_messages
FROM sessions s WHERE s.id = sqlc.arg(id);
