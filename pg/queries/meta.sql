-- name: MetaUpsert :exec
INSERT INTO meta (key, value, updated_at)
VALUES (sqlc.arg(key), sqlc.arg(value), sqlc.arg(updated_at))
ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;

-- name: MetaGet :one
SELECT value FROM meta WHERE key = sqlc.arg(key);

-- name: MetaInsertIfAbsent :exec
-- The first writer wins (used for the file generation id).
INSERT INTO meta (key, value, updated_at)
VALUES (sqlc.arg(key), sqlc.arg(value), sqlc.arg(updated_at))
ON CONFLICT (key) DO NOTHING;

-- name: MetaDelete :execrows
DELETE FROM meta WHERE key = sqlc.arg(key);
