-- name: MessageInsert :one
INSERT INTO messages (
    session_id, role, content, tool_name, tool_call_id, tool_calls_json, tool_text,
    reasoning, reasoning_details, finish_reason, token_count, is_summary, idempotency_key, created_at,
    parts_json, model, platform_message_id, metadata_json, observed, effect_disposition, reasoning_content, display_kind, uid, call_uid,
    tool_ended_at, tool_duration_ms
) VALUES (
    sqlc.arg(session_id), sqlc.arg(role), sqlc.arg(content), sqlc.narg(tool_name),
    sqlc.narg(tool_call_id), sqlc.narg(tool_calls_json), sqlc.narg(tool_text), sqlc.narg(reasoning), sqlc.narg(reasoning_details),
    sqlc.narg(finish_reason), sqlc.narg(token_count), sqlc.arg(is_summary), sqlc.narg(idempotency_key),
    sqlc.arg(created_at), sqlc.narg(parts_json), sqlc.narg(model), sqlc.narg(platform_message_id),
    sqlc.narg(metadata_json), sqlc.arg(observed), sqlc.narg(effect_disposition), sqlc.narg(reasoning_content), sqlc.narg(display_kind), sqlc.narg(uid), sqlc.narg(call_uid),
    sqlc.narg(tool_ended_at), sqlc.narg(tool_duration_ms)
)
RETURNING id;

-- name: MessageIDByIdempotencyKey :one
SELECT id FROM messages
WHERE session_id = sqlc.arg(session_id) AND idempotency_key = sqlc.arg(idempotency_key);

-- name: MessageIDByPlatformID :one
-- The message of a session a chat platform's id names (unique per session:
-- messages_platform_id), whatever its state.
SELECT id FROM messages
WHERE session_id = sqlc.arg(session_id) AND platform_message_id = sqlc.arg(platform_message_id);

-- name: MessageListAscending :many
-- Oldest first, strictly between after_id and before_id.
SELECT * FROM messages
WHERE session_id = sqlc.arg(session_id)
  AND id > sqlc.arg(after_id) AND id < sqlc.arg(before_id)
  AND (CAST(sqlc.arg(include_rewound) AS bigint) = 1 OR state <> 'rewound')
ORDER BY id ASC
LIMIT CAST(sqlc.arg(row_limit) AS bigint);

-- name: MessageListDescending :many
-- Newest first, strictly between after_id and before_id.
SELECT * FROM messages
WHERE session_id = sqlc.arg(session_id)
  AND id > sqlc.arg(after_id) AND id < sqlc.arg(before_id)
  AND (CAST(sqlc.arg(include_rewound) AS bigint) = 1 OR state <> 'rewound')
ORDER BY id DESC
LIMIT CAST(sqlc.arg(row_limit) AS bigint);
