-- name: SessionSetFlags :execrows
-- Sets the given flags (NULL = leave as it is) on one session. Pinning
-- unhides. read: 1 marks read at read_at, 0 marks unread (last_read_at 0).
UPDATE sessions
SET archived = COALESCE(CAST(sqlc.narg(archived) AS INTEGER), archived),
    pinned = COALESCE(CAST(sqlc.narg(pinned) AS INTEGER), pinned),
    hidden = CASE WHEN CAST(sqlc.narg(pinned) AS INTEGER) = 1 THEN 0
                  ELSE COALESCE(CAST(sqlc.narg(hidden) AS INTEGER), hidden) END,
    last_read_at = CASE CAST(sqlc.narg(read) AS INTEGER)
                       WHEN 1 THEN sqlc.arg(read_at) WHEN 0 THEN 0 ELSE last_read_at END
WHERE id = sqlc.arg(id);
