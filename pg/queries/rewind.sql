-- name: MessageGet :one
SELECT * FROM messages WHERE id = sqlc.arg(id);

-- name: MessageActiveIDs :many
SELECT id FROM messages WHERE session_id = sqlc.arg(session_id) AND state = 'active' ORDER BY id;

-- name: MessageRewindFrom :execrows
-- A rewind is soft: the rows stay, hidden from the conversation and search.
UPDATE messages SET state = 'rewound'
WHERE session_id = sqlc.arg(session_id) AND state = 'active' AND id >= sqlc.arg(from_id);

-- name: SessionCountRewind :exec
UPDATE sessions SET rewind_count = rewind_count + 1 WHERE id = sqlc.arg(id);
