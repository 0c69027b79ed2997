-- The neutral half of search: what the domain reads around a hit. The
-- search itself is the engine's (pg/search.go), built from the sanitised
-- terms at run time.

-- name: MessageContextBefore :many
-- Up to row_limit live (active or compacted) messages before id in its
-- session, nearest first, content cut to max_chars characters.
SELECT id, role, CAST(substr(content, 1, CAST(CAST(sqlc.arg(max_chars) AS bigint) AS integer)) AS text) AS content
FROM messages
WHERE session_id = sqlc.arg(session_id) AND id < sqlc.arg(id) AND state <> 'rewound'
ORDER BY id DESC
LIMIT CAST(sqlc.arg(row_limit) AS bigint);

-- name: MessageContextAfter :many
-- Up to row_limit live messages after id in its session, nearest first.
SELECT id, role, CAST(substr(content, 1, CAST(CAST(sqlc.arg(max_chars) AS bigint) AS integer)) AS text) AS content
FROM messages
WHERE session_id = sqlc.arg(session_id) AND id > sqlc.arg(id) AND state <> 'rewound'
ORDER BY id ASC
LIMIT CAST(sqlc.arg(row_limit) AS bigint);
