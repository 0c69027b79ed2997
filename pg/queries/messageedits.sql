-- Edits of a session's messages the domain makes on request: replacing
-- its active messages (a fork) and scrubbing text out of them. The twins
-- of queries/messageedits.sql.

-- name: MessageRetireActive :execrows
-- Every active message of the session becomes rewound and hands its
-- idempotency key and platform message id to the set that replaces it
-- (a fork re-appends the same messages under the same keys); compacted
-- rows stay as they are.
UPDATE messages SET state = 'rewound', idempotency_key = NULL, platform_message_id = NULL
WHERE session_id = sqlc.arg(session_id) AND state = 'active';

-- name: MessagesHoldingText :many
-- The session's messages whose content holds needle, or whose parts hold
-- parts_needle (JSON text, where Go writes < as \u003c), any state.
SELECT id, content, parts_json FROM messages
WHERE session_id = sqlc.arg(session_id)
  AND (strpos(content, sqlc.arg(needle)) > 0 OR strpos(COALESCE(parts_json, ''), sqlc.arg(parts_needle)) > 0)
ORDER BY id;

-- name: MessageSetContent :exec
-- The search indexes follow in the same transaction.
UPDATE messages SET content = sqlc.arg(content), parts_json = sqlc.narg(parts_json) WHERE id = sqlc.arg(id);
