-- Importing another store's sessions (a Hermes state.db, read by package
-- hermes): every column sessiondb models, written as the source had it.
-- The twins of queries/hermes.sql; SQLite's two-argument MAX and MIN are
-- GREATEST and LEAST here.

-- name: ForeignSessionInsert :execrows
INSERT INTO sessions (
    id, source, parent_session_id, parent_kind, user_id, model, model_config_json, system_prompt,
    cwd, git_branch, git_repo_root, started_at, ended_at, end_reason, title, title_rank,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
    api_call_count, estimated_cost_usd, actual_cost_usd, billing_provider, billing_base_url,
    billing_mode, cost_status, cost_source, pricing_version, session_key, chat_id, chat_type,
    thread_id, display_name, origin_json, handoff_state, handoff_platform, handoff_error,
    handoff_updated_at, archived, pinned, hidden, last_read_at, rewind_count,
    last_activity_at, last_activity_description, last_activity_provenance,
    compression_retry_after, compression_error, compression_fallback_streak, delegated_from
) VALUES (
    sqlc.arg(id), sqlc.arg(source), sqlc.narg(parent_session_id), sqlc.narg(parent_kind),
    sqlc.narg(user_id), sqlc.narg(model), sqlc.narg(model_config_json), sqlc.narg(system_prompt),
    sqlc.narg(cwd), sqlc.narg(git_branch), sqlc.narg(git_repo_root), sqlc.arg(started_at),
    sqlc.narg(ended_at), sqlc.narg(end_reason), sqlc.narg(title), sqlc.arg(title_rank),
    sqlc.arg(input_tokens), sqlc.arg(output_tokens), sqlc.arg(cache_read_tokens),
    sqlc.arg(cache_write_tokens), sqlc.arg(reasoning_tokens), sqlc.arg(api_call_count),
    sqlc.arg(estimated_cost_usd), sqlc.arg(actual_cost_usd), sqlc.narg(billing_provider),
    sqlc.narg(billing_base_url), sqlc.narg(billing_mode), sqlc.narg(cost_status),
    sqlc.narg(cost_source), sqlc.narg(pricing_version), sqlc.narg(session_key), sqlc.narg(chat_id),
    sqlc.narg(chat_type), sqlc.narg(thread_id), sqlc.narg(display_name), sqlc.narg(origin_json),
    sqlc.narg(handoff_state), sqlc.narg(handoff_platform), sqlc.narg(handoff_error),
    sqlc.narg(handoff_updated_at), sqlc.arg(archived), sqlc.arg(pinned), sqlc.arg(hidden),
    sqlc.narg(last_read_at), sqlc.arg(rewind_count), sqlc.narg(last_activity_at),
    sqlc.narg(last_activity_description), sqlc.narg(last_activity_provenance),
    sqlc.narg(compression_retry_after), sqlc.narg(compression_error),
    sqlc.arg(compression_fallback_streak), sqlc.narg(delegated_from)
) ON CONFLICT (id) DO NOTHING;

-- name: ForeignSessionRefresh :exec
-- A later import of a session the source went on writing: it may have
-- ended, and its usage only grows. Fields sessiondb's own calls may have
-- changed since (title, flags, handoff) are left to them.
UPDATE sessions
SET ended_at = COALESCE(ended_at, sqlc.narg(ended_at)),
    end_reason = CASE WHEN ended_at IS NULL THEN sqlc.narg(end_reason) ELSE end_reason END,
    input_tokens = GREATEST(input_tokens, CAST(sqlc.arg(input_tokens) AS bigint)),
    output_tokens = GREATEST(output_tokens, CAST(sqlc.arg(output_tokens) AS bigint)),
    cache_read_tokens = GREATEST(cache_read_tokens, CAST(sqlc.arg(cache_read_tokens) AS bigint)),
    cache_write_tokens = GREATEST(cache_write_tokens, CAST(sqlc.arg(cache_write_tokens) AS bigint)),
    reasoning_tokens = GREATEST(reasoning_tokens, CAST(sqlc.arg(reasoning_tokens) AS bigint)),
    api_call_count = GREATEST(api_call_count, CAST(sqlc.arg(api_call_count) AS bigint)),
    estimated_cost_usd = GREATEST(estimated_cost_usd, CAST(sqlc.arg(estimated_cost_usd) AS double precision)),
    actual_cost_usd = GREATEST(actual_cost_usd, CAST(sqlc.arg(actual_cost_usd) AS double precision)),
    rewind_count = GREATEST(rewind_count, CAST(sqlc.arg(rewind_count) AS bigint))
WHERE id = sqlc.arg(id);

-- name: ImportedSessionGet :one
SELECT origin, fingerprint FROM imported_sessions WHERE session_id = sqlc.arg(session_id);

-- name: ImportedSessionPut :exec
INSERT INTO imported_sessions (session_id, origin, fingerprint, imported_at, updated_at)
VALUES (sqlc.arg(session_id), sqlc.arg(origin), sqlc.arg(fingerprint), sqlc.arg(at), sqlc.arg(at))
ON CONFLICT (session_id) DO UPDATE SET fingerprint = excluded.fingerprint, updated_at = excluded.updated_at;

-- name: ForeignMessageInsert :one
-- A foreign source's message, the columns it has: its parameters are
-- store.ForeignMessage, the row an importer maps. The import itself writes
-- a batch's rows as MessageImport's (store/foreignmessages.go: COPY on
-- PostgreSQL); this is the same row inserted alone.
INSERT INTO messages (
    session_id, role, content, tool_name, tool_call_id, tool_calls_json, tool_text, reasoning,
    reasoning_details, finish_reason, token_count, platform_message_id, state, is_summary,
    idempotency_key, created_at, metadata_json, observed, effect_disposition, reasoning_content, uid
) VALUES (
    sqlc.arg(session_id), sqlc.arg(role), sqlc.arg(content), sqlc.narg(tool_name),
    sqlc.narg(tool_call_id), sqlc.narg(tool_calls_json), sqlc.narg(tool_text), sqlc.narg(reasoning),
    sqlc.narg(reasoning_details), sqlc.narg(finish_reason), sqlc.narg(token_count),
    sqlc.narg(platform_message_id), sqlc.arg(state), sqlc.arg(is_summary),
    sqlc.arg(idempotency_key), sqlc.arg(created_at), sqlc.narg(metadata_json),
    sqlc.arg(observed), sqlc.narg(effect_disposition), sqlc.narg(reasoning_content), sqlc.narg(uid)
)
RETURNING id;

-- name: MessageStateByKey :one
SELECT id, state FROM messages
WHERE session_id = sqlc.arg(session_id) AND idempotency_key = sqlc.arg(idempotency_key);

-- name: MessageStatesByKeys :many
-- The id and state of each message of a session that holds one of keys,
-- a JSON array of idempotency keys: a foreign import's batch looks up
-- what it already wrote in one statement, not one a message.
SELECT idempotency_key, id, state FROM messages
WHERE session_id = sqlc.arg(session_id)
  AND idempotency_key = ANY (ARRAY(SELECT json_array_elements_text(CAST(CAST(sqlc.arg(keys) AS text) AS json))));

-- name: MessagePlatformIDsHeld :many
-- Which of pids, a JSON array of platform message ids, the session's
-- messages hold.
SELECT platform_message_id FROM messages
WHERE session_id = sqlc.arg(session_id)
  AND platform_message_id = ANY (ARRAY(SELECT json_array_elements_text(CAST(CAST(sqlc.arg(pids) AS text) AS json))));

-- name: MessageSetState :exec
UPDATE messages SET state = sqlc.arg(state) WHERE id = sqlc.arg(id);

-- name: ForeignModelUsagePut :exec
-- The source's figures for a (session, model, task, billing route) row are
-- its totals: set, not added, so importing twice counts once.
INSERT INTO session_model_usage (
    session_id, model, task, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at,
    last_seen_at, billing_provider, billing_base_url, billing_mode, cost_status, cost_source
) VALUES (
    sqlc.arg(session_id), sqlc.arg(model), sqlc.arg(task), sqlc.arg(input_tokens),
    sqlc.arg(output_tokens), sqlc.arg(cache_read_tokens), sqlc.arg(cache_write_tokens),
    sqlc.arg(reasoning_tokens), sqlc.arg(api_call_count), sqlc.arg(estimated_cost_usd),
    sqlc.arg(actual_cost_usd), sqlc.arg(first_seen_at), sqlc.arg(last_seen_at),
    sqlc.arg(billing_provider), sqlc.arg(billing_base_url), sqlc.arg(billing_mode),
    sqlc.narg(cost_status), sqlc.narg(cost_source)
) ON CONFLICT (session_id, model, task, billing_provider, billing_base_url, billing_mode) DO UPDATE SET
    input_tokens = excluded.input_tokens,
    output_tokens = excluded.output_tokens,
    cache_read_tokens = excluded.cache_read_tokens,
    cache_write_tokens = excluded.cache_write_tokens,
    reasoning_tokens = excluded.reasoning_tokens,
    api_call_count = excluded.api_call_count,
    estimated_cost_usd = excluded.estimated_cost_usd,
    actual_cost_usd = excluded.actual_cost_usd,
    first_seen_at = LEAST(session_model_usage.first_seen_at, excluded.first_seen_at),
    last_seen_at = GREATEST(session_model_usage.last_seen_at, excluded.last_seen_at),
    cost_status = excluded.cost_status,
    cost_source = excluded.cost_source;
