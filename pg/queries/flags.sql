-- name: SessionSetFlags :execrows
-- Sets the given flags (NULL = leave as it is) on one session. Pinning
-- unhides. read: 1 marks read at read_at, 0 marks unread (last_read_at 0).
UPDATE sessions
SET archived = COALESCE(CAST(sqlc.narg(archived) AS bigint), archived),
    pinned = COALESCE(CAST(sqlc.narg(pinned) AS bigint), pinned),
    hidden = CASE WHEN CAST(sqlc.narg(pinned) AS bigint) = 1 THEN 0
                  ELSE COALESCE(CAST(sqlc.narg(hidden) AS bigint), hidden) END,
    last_read_at = CASE CAST(sqlc.narg(read) AS bigint)
                       WHEN 1 THEN sqlc.arg(read_at) WHEN 0 THEN 0 ELSE last_read_at END
WHERE id = sqlc.arg(id);
