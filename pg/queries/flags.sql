-- name: SessionSetFlags :execrows
-- Sets the given flags (NULL = leave as it is) on one session. Pinning
-- unhides. Setting archived (either way) is a person's choice, never
-- the sweep's: auto_archived goes. read: 1 marks read at read_at, 0 marks unread (last_read_at 0).
UPDATE sessions
SET archived = COALESCE(CAST(sqlc.narg(archived) AS bigint), archived),
    auto_archived = CASE WHEN CAST(sqlc.narg(archived) AS bigint) IS NULL THEN auto_archived ELSE 0 END,
    pinned = COALESCE(CAST(sqlc.narg(pinned) AS bigint), pinned),
    hidden = CASE WHEN CAST(sqlc.narg(pinned) AS bigint) = 1 THEN 0
                  ELSE COALESCE(CAST(sqlc.narg(hidden) AS bigint), hidden) END,
    last_read_at = CASE CAST(sqlc.narg(read) AS bigint)
                       WHEN 1 THEN sqlc.arg(read_at) WHEN 0 THEN 0 ELSE last_read_at END
WHERE id = sqlc.arg(id);

-- name: SessionAutoArchive :execrows
-- The idle sweep's archive (store/bulk.go): marked auto_archived, so new
-- activity takes it back. An archived session is left as it is.
UPDATE sessions SET archived = 1, auto_archived = 1
WHERE id = sqlc.arg(id) AND archived = 0;

-- name: SessionReactivate :execrows
-- New activity takes back an archive the idle sweep made, never one a
-- person made.
UPDATE sessions SET archived = 0, auto_archived = 0
WHERE id = sqlc.arg(id) AND auto_archived = 1;
