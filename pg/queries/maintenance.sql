-- name: SessionPruneCandidates :many
-- Ended sessions idle since before the cutoff and not pinned, oldest first,
-- after a (ended_at, id) cursor.
SELECT id, ended_at FROM sessions
WHERE ended_at IS NOT NULL AND ended_at < sqlc.arg(cutoff)
  AND (last_activity_at IS NULL OR last_activity_at < sqlc.arg(cutoff))
  AND pinned = 0
  AND (ended_at > sqlc.arg(after_ended) OR (ended_at = sqlc.arg(after_ended) AND id > sqlc.arg(after_id)))
ORDER BY ended_at, id
LIMIT CAST(sqlc.arg(row_limit) AS bigint);

-- name: SessionCount :one
SELECT COUNT(*) FROM sessions;

-- name: MessageCount :one
SELECT COUNT(*) FROM messages;
