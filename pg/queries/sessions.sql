-- name: SessionInsert :execrows
-- Creates a session; inserts nothing when the id exists (the caller decides
-- whether that is an error or an ensure).
INSERT INTO sessions (
    id, source, parent_session_id, parent_kind, user_id, model, model_config_json,
    system_prompt, cwd, title, title_rank, started_at
) VALUES (
    sqlc.arg(id), sqlc.arg(source), sqlc.narg(parent_session_id), sqlc.narg(parent_kind), sqlc.narg(user_id),
    sqlc.narg(model), sqlc.narg(model_config_json), sqlc.narg(system_prompt),
    sqlc.narg(cwd), sqlc.narg(title), sqlc.arg(title_rank), sqlc.arg(started_at)
) ON CONFLICT (id) DO NOTHING;

-- name: SessionGet :one
SELECT * FROM sessions WHERE id = sqlc.arg(id);

-- name: SessionExists :one
SELECT COUNT(*) FROM sessions WHERE id = sqlc.arg(id);

-- name: SessionEnd :execrows
-- The first end reason wins: a session already ended is left as it is.
UPDATE sessions
SET ended_at = sqlc.arg(ended_at), end_reason = sqlc.arg(end_reason)
WHERE id = sqlc.arg(id) AND ended_at IS NULL;

-- name: SessionAddMessageCounts :execrows
-- One append (one message or a batch) is one visible change of the
-- session's transcript: display_revision moves by one, in this statement
-- the append runs anyway (store/display.go).
-- Runs in the same transaction as the message inserts it counts. It counts
-- nothing (0 rows) for a session closed by compression (or missing), and
-- the caller then refuses the inserts: an append reads nothing of its
-- session before it (store's insertMessages). The literal is the store's
-- compressionEndReason.
-- It also moves last_message_at forward to the newest created_at of the
-- rows it counts — the session's last `messages` rows by id, which are
-- the caller's: its transaction holds the session's row lock from before
-- its inserts (pg/tx.go) or, under SERIALIZABLE, a concurrent
-- insert into the session fails one of the two. That is the trigger's work
-- (migration 6) in this statement's one row version. GREATEST skips NULL.
-- conversation_active_at moves with it (migration 12), and new activity
-- takes back an archive the idle sweep made (auto_archived), never one a
-- person made.
UPDATE sessions
SET message_count = message_count + sqlc.arg(messages),
    tool_call_count = tool_call_count + sqlc.arg(tool_calls),
    display_revision = display_revision + 1,
    archived = archived * (1 - auto_archived),
    auto_archived = 0,
    last_message_at = GREATEST(sessions.last_message_at, newest.at),
    conversation_active_at = GREATEST(COALESCE(sessions.conversation_active_at, sessions.started_at), newest.at)
FROM (SELECT max(n.created_at) AS at FROM (
        SELECT m.created_at FROM messages m WHERE m.session_id = sqlc.arg(id)
        ORDER BY m.id DESC LIMIT sqlc.arg(messages)) n) newest
WHERE sessions.id = sqlc.arg(id) AND sessions.end_reason IS DISTINCT FROM 'compression';

-- name: SessionList :many
-- Newest first. Every filter is optional (NULL = any).
SELECT * FROM sessions
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR source = sqlc.narg(source))
  AND (CAST(sqlc.narg(parent_session_id) AS TEXT) IS NULL OR parent_session_id = sqlc.narg(parent_session_id))
  AND (CAST(sqlc.narg(ended) AS bigint) IS NULL
       OR (CAST(sqlc.narg(ended) AS bigint) = 1 AND ended_at IS NOT NULL)
       OR (CAST(sqlc.narg(ended) AS bigint) = 0 AND ended_at IS NULL))
ORDER BY started_at DESC, id DESC
LIMIT CAST(sqlc.arg(row_limit) AS bigint) OFFSET CAST(sqlc.arg(row_offset) AS bigint);

-- name: SessionFillUnset :exec
-- EnsureSession on an existing session: columns already set are kept; only
-- empty ones are filled, and the 'unknown' source placeholder is replaced.
UPDATE sessions
SET source = CASE WHEN source = 'unknown' THEN sqlc.arg(source) ELSE source END,
    user_id = COALESCE(user_id, sqlc.narg(user_id)),
    model = COALESCE(model, sqlc.narg(model)),
    model_config_json = COALESCE(model_config_json, sqlc.narg(model_config_json)),
    system_prompt = COALESCE(system_prompt, sqlc.narg(system_prompt)),
    cwd = COALESCE(cwd, sqlc.narg(cwd))
WHERE id = sqlc.arg(id);
