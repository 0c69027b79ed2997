-- name: SessionTitleGet :one
-- The title (NULL when unset) and its rank, read inside the write that
-- decides whether a new title may replace it.
SELECT title, title_rank FROM sessions WHERE id = sqlc.arg(id);

-- name: SessionTitleOwner :one
-- The session holding a title (the partial unique index makes it one).
SELECT id, title_rank FROM sessions WHERE title = sqlc.arg(title);

-- name: SessionTitleSet :execrows
-- Sets (or, with a NULL title, clears) a title and its rank.
UPDATE sessions SET title = sqlc.narg(title), title_rank = sqlc.arg(title_rank)
WHERE id = sqlc.arg(id);
