-- name: SessionOrphanChildren :execrows
-- Children that are not deleted with their parent lose the link (and with
-- it their kind): they become roots of their own.
UPDATE sessions SET parent_session_id = NULL, parent_kind = NULL
WHERE parent_session_id = sqlc.arg(id);

-- name: SessionDelete :execrows
-- Messages, usage rows and the compression lock go with the session
-- (ON DELETE CASCADE), and with the rows their search index entries.
DELETE FROM sessions WHERE id = sqlc.arg(id);
