-- name: SessionTitleGet :one
-- The title (NULL when unset), its rank and the user whose titles it must
-- differ from, read inside the write that decides whether a new title may
-- replace it.
SELECT title, title_rank, user_id FROM sessions WHERE id = sqlc.arg(id);

-- name: SessionTitleOwner :one
-- The session of a user holding a title (the partial unique index on
-- user and title makes it one). A NULL user is the scope of sessions
-- without a user.
SELECT id, title_rank FROM sessions
WHERE title = sqlc.arg(title) AND COALESCE(user_id, '') = COALESCE(sqlc.narg(user_id), '');

-- name: SessionTitleSet :execrows
-- Sets (or, with a NULL title, clears) a title and its rank.
UPDATE sessions SET title = sqlc.narg(title), title_rank = sqlc.arg(title_rank)
WHERE id = sqlc.arg(id);

-- name: SessionTitlesNumbered :many
-- A user's titles that are the base or a continuation of it ("base #N");
-- the caller parses the numbers. substr and length count characters, as
-- the base's prefix needs.
SELECT id, title FROM sessions
WHERE COALESCE(user_id, '') = COALESCE(sqlc.narg(user_id), '')
  AND title IS NOT NULL
  AND (title = sqlc.arg(base) OR substr(title, 1, length(sqlc.arg(base)) + 2) = sqlc.arg(base) || ' #');
