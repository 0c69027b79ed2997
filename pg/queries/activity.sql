-- name: SessionActivityTouch :execrows
-- Monotonic: an older touch matches no row and changes nothing, labels
-- included. An empty (NULL) label keeps the current one.
UPDATE sessions
SET last_activity_at = sqlc.arg(at),
    last_activity_description = COALESCE(sqlc.narg(description), last_activity_description),
    last_activity_provenance = COALESCE(sqlc.narg(provenance), last_activity_provenance)
WHERE id = sqlc.arg(id) AND (last_activity_at IS NULL OR last_activity_at <= sqlc.arg(at));

-- name: SessionActivityClearLabels :execrows
-- Keeps last_activity_at.
UPDATE sessions
SET last_activity_description = NULL, last_activity_provenance = NULL
WHERE id = sqlc.arg(id);
