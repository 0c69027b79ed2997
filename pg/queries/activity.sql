-- name: SessionActivityTouch :execrows
-- Monotonic: an older touch matches no row and changes nothing, labels
-- included. An empty (NULL) label keeps the current one. A heartbeat is
-- activity of the conversation too (conversation_active_at).
UPDATE sessions
SET last_activity_at = sqlc.arg(at),
    conversation_active_at = GREATEST(COALESCE(conversation_active_at, started_at), sqlc.arg(at)),
    last_activity_description = COALESCE(sqlc.narg(description), last_activity_description),
    last_activity_provenance = COALESCE(sqlc.narg(provenance), last_activity_provenance)
WHERE id = sqlc.arg(id) AND (last_activity_at IS NULL OR last_activity_at <= sqlc.arg(at));

-- name: SessionActivityClearLabels :execrows
-- Keeps last_activity_at.
UPDATE sessions
SET last_activity_description = NULL, last_activity_provenance = NULL
WHERE id = sqlc.arg(id);

-- name: SessionConversationActivitySet :exec
-- The store's recompute after a compression link changed
-- (store/conversationactivity.go).
UPDATE sessions SET conversation_active_at = sqlc.arg(at) WHERE id = sqlc.arg(id);
