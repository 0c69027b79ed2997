-- Compression: a long conversation's active rows are replaced by a shorter
-- set (CompactSession), or the conversation continues in a child session
-- (PublishCompressionChild). Appends never wait for the compression lock:
-- rows that arrive while a compressor works sit above its watermark and
-- are carried over after the new rows.

-- name: MessageActiveWatermark :one
SELECT CAST(COALESCE(MAX(id), 0) AS bigint) FROM messages
WHERE session_id = sqlc.arg(session_id) AND state = 'active';

-- name: MessageCompactUpTo :execrows
UPDATE messages SET state = 'compacted'
WHERE session_id = sqlc.arg(session_id) AND state = 'active' AND id <= sqlc.arg(watermark);

-- name: MessageActiveAbove :many
SELECT * FROM messages
WHERE session_id = sqlc.arg(session_id) AND state = 'active' AND id > sqlc.arg(watermark)
ORDER BY id;

-- name: MessageRetire :exec
-- An original whose copy now stands in its place: hidden, and its
-- idempotency key and platform message id (both unique per session)
-- handed to the copy.
UPDATE messages SET state = 'rewound', idempotency_key = NULL, platform_message_id = NULL
WHERE id = sqlc.arg(id);

-- name: MessageCopy :one
-- Copies a message into session_id as an active row, whole (its parts,
-- model, metadata and reasoning details with it); origin_id keeps the
-- first original's id, so views can show the turn once. The idempotency
-- key and platform message id are the caller's to give: the source's,
-- read before MessageRetire handed them over.
INSERT INTO messages (
    session_id, role, content, tool_name, tool_call_id, tool_calls_json, tool_text, reasoning,
    reasoning_details, finish_reason, token_count, state, is_summary, idempotency_key,
    platform_message_id, created_at, origin_id, parts_json, model, metadata_json,
    observed, effect_disposition, reasoning_content, display_kind, uid, call_uid, tool_ended_at, tool_duration_ms
)
SELECT sqlc.arg(session_id), m.role, m.content, m.tool_name, m.tool_call_id, m.tool_calls_json, m.tool_text,
       m.reasoning, m.reasoning_details, m.finish_reason, m.token_count, 'active', m.is_summary,
       sqlc.narg(idempotency_key), sqlc.narg(platform_message_id), m.created_at,
       COALESCE(m.origin_id, m.id), m.parts_json, m.model, m.metadata_json,
       m.observed, m.effect_disposition, m.reasoning_content, m.display_kind, m.uid, m.call_uid, m.tool_ended_at, m.tool_duration_ms
FROM messages m WHERE m.id = sqlc.arg(source_id)
RETURNING id;

-- name: SessionRecount :exec
-- message_count and tool_call_count count active rows: recomputed after a
-- change of state (compaction, rewind). tool_calls_json is text holding a
-- JSON array; json_array_length needs it cast (invalid JSON fails, as it
-- does on SQLite).
UPDATE sessions
SET message_count = (SELECT COUNT(*) FROM messages m
                     WHERE m.session_id = sessions.id AND m.state = 'active'),
    tool_call_count = (SELECT COALESCE(SUM(json_array_length(CAST(m.tool_calls_json AS json))), 0) FROM messages m
                       WHERE m.session_id = sessions.id AND m.state = 'active'),
    -- the trigger's work for the rows the caller inserted (migrations 6, 12)
    last_message_at = GREATEST(sessions.last_message_at, newest.at),
    conversation_active_at = GREATEST(COALESCE(sessions.conversation_active_at, sessions.started_at), newest.at)
FROM (SELECT max(m.created_at) AS at FROM messages m WHERE m.session_id = sqlc.arg(id)) newest
WHERE sessions.id = sqlc.arg(id);

-- name: SessionEndForCompression :execrows
-- Stamps the parent of a continuation. An automatic end stamp (a reaper, a
-- disconnect) does not close a session to compression; an explicit one does.
UPDATE sessions SET ended_at = sqlc.arg(ended_at), end_reason = 'compression'
WHERE id = sqlc.arg(id)
  AND (ended_at IS NULL OR end_reason IN (
      'agent_close', 'ws_orphan_reap', 'superseded_by_resume', 'startup_orphan_reap',
      'tui_shutdown', 'ws_disconnect', 'idle_timeout', 'lru_evict'));

-- name: SessionCopyFlags :exec
-- A continuation keeps its parent's pin, archive and hidden flags, except
-- an archive the idle sweep made: a continuation is new activity.
UPDATE sessions
SET pinned = (SELECT p.pinned FROM sessions p WHERE p.id = sqlc.arg(parent_id)),
    archived = (SELECT p.archived * (1 - p.auto_archived) FROM sessions p WHERE p.id = sqlc.arg(parent_id)),
    hidden = (SELECT p.hidden FROM sessions p WHERE p.id = sqlc.arg(parent_id))
WHERE sessions.id = sqlc.arg(id);

-- name: SessionEndReason :one
-- What an append needs to know: does the session exist, and is it closed
-- by compression?
SELECT end_reason FROM sessions WHERE id = sqlc.arg(id);

-- name: MessageCallsBefore :many
-- The nearest assistant message before position, in position's session,
-- whose tool calls hold needle (the id of a call as Go writes it, quoted and keyed): where
-- a tool result read without its call (on another page, compacted, or
-- the copy's original in a parent session) finds the call it answers.
-- The caller decodes the calls and checks the id.
SELECT m.id, m.origin_id, m.tool_calls_json
FROM messages o JOIN messages m ON m.session_id = o.session_id
WHERE o.id = sqlc.arg(position) AND m.id < o.id AND m.role = 'assistant'
  AND strpos(m.tool_calls_json, sqlc.arg(needle)) > 0
ORDER BY m.id DESC
LIMIT 1;
