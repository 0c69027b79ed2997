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

-- name: SessionTitleIsCompressionAncestor :one
-- Counts how often ancestor appears among the compression ancestors of id:
-- parent_session_id walked upward only through links whose parent_kind is
-- 'compression', at most 1000 steps (the cap also ends a cycle).
WITH RECURSIVE chain AS (
    SELECT p.parent_session_id AS ancestor_id, 1 AS depth FROM sessions p
    WHERE p.id = CAST(sqlc.arg(id) AS TEXT) AND p.parent_kind = 'compression' AND p.parent_session_id IS NOT NULL
    UNION ALL
    SELECT s.parent_session_id, chain.depth + 1 FROM sessions s JOIN chain ON s.id = chain.ancestor_id
    WHERE s.parent_kind = 'compression' AND s.parent_session_id IS NOT NULL AND chain.depth < 1000
)
SELECT COUNT(*) FROM chain WHERE chain.ancestor_id = CAST(sqlc.arg(ancestor) AS TEXT);
