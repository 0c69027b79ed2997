-- Export and import: JSON Lines, sessions in (started_at, id) order, each
-- followed by its messages in id order.

-- name: SessionExportPage :many
SELECT * FROM sessions
WHERE started_at > sqlc.arg(after_started) OR (started_at = sqlc.arg(after_started) AND id > sqlc.arg(after_id))
ORDER BY started_at, id
LIMIT sqlc.arg(row_limit);

-- name: MessageExportPage :many
SELECT * FROM messages
WHERE session_id = sqlc.arg(session_id) AND id > sqlc.arg(after_id)
ORDER BY id
LIMIT sqlc.arg(row_limit);

-- name: MessageSeq :one
-- A message's 1-based position in its session: how an export names it.
SELECT m.session_id, CAST((SELECT COUNT(*) FROM messages n
                           WHERE n.session_id = m.session_id AND n.id <= m.id) AS INTEGER) AS seq
FROM messages m WHERE m.id = sqlc.arg(id);

-- name: MessageIDBySeq :one
SELECT id FROM messages WHERE session_id = sqlc.arg(session_id)
ORDER BY id LIMIT 1 OFFSET sqlc.arg(seq_offset);

-- name: SessionImport :execrows
INSERT INTO sessions (
    id, source, parent_session_id, parent_kind, user_id, model, model_config_json, system_prompt,
    cwd, started_at, ended_at, end_reason, title, title_rank, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reasoning_tokens, api_call_count, estimated_cost_usd,
    actual_cost_usd, archived, pinned, hidden, last_read_at, rewind_count, delegated_from,
    billing_provider, billing_base_url, billing_mode, cost_status, cost_source, pricing_version
) VALUES (
    sqlc.arg(id), sqlc.arg(source), sqlc.narg(parent_session_id), sqlc.narg(parent_kind),
    sqlc.narg(user_id), sqlc.narg(model), sqlc.narg(model_config_json), sqlc.narg(system_prompt),
    sqlc.narg(cwd), sqlc.arg(started_at), sqlc.narg(ended_at), sqlc.narg(end_reason),
    sqlc.narg(title), sqlc.arg(title_rank), sqlc.arg(input_tokens), sqlc.arg(output_tokens),
    sqlc.arg(cache_read_tokens), sqlc.arg(cache_write_tokens), sqlc.arg(reasoning_tokens),
    sqlc.arg(api_call_count), sqlc.arg(estimated_cost_usd), sqlc.arg(actual_cost_usd),
    sqlc.arg(archived), sqlc.arg(pinned), sqlc.arg(hidden), sqlc.narg(last_read_at),
    sqlc.arg(rewind_count), sqlc.narg(delegated_from), sqlc.narg(billing_provider),
    sqlc.narg(billing_base_url), sqlc.narg(billing_mode), sqlc.narg(cost_status), sqlc.narg(cost_source),
    sqlc.narg(pricing_version)
) ON CONFLICT (id) DO NOTHING;

-- name: MessageImport :one
INSERT INTO messages (
    session_id, role, content, tool_name, tool_call_id, tool_calls_json, tool_text, reasoning,
    reasoning_details, finish_reason, token_count, state, is_summary, idempotency_key,
    platform_message_id, created_at, origin_id, parts_json, model, metadata_json,
    observed, effect_disposition, reasoning_content, display_kind, uid, call_uid, tool_ended_at, tool_duration_ms
) VALUES (
    sqlc.arg(session_id), sqlc.arg(role), sqlc.arg(content), sqlc.narg(tool_name),
    sqlc.narg(tool_call_id), sqlc.narg(tool_calls_json), sqlc.narg(tool_text), sqlc.narg(reasoning),
    sqlc.narg(reasoning_details), sqlc.narg(finish_reason), sqlc.narg(token_count),
    sqlc.arg(state), sqlc.arg(is_summary), sqlc.narg(idempotency_key),
    sqlc.narg(platform_message_id), sqlc.arg(created_at), sqlc.narg(origin_id),
    sqlc.narg(parts_json), sqlc.narg(model), sqlc.narg(metadata_json),
    sqlc.arg(observed), sqlc.narg(effect_disposition), sqlc.narg(reasoning_content), sqlc.narg(display_kind), sqlc.narg(uid), sqlc.narg(call_uid),
    sqlc.narg(tool_ended_at), sqlc.narg(tool_duration_ms)
)
RETURNING id;

-- name: MessageSetOrigin :exec
UPDATE messages SET origin_id = sqlc.narg(origin_id) WHERE id = sqlc.arg(id);

-- name: SessionLink :exec
UPDATE sessions SET parent_session_id = sqlc.arg(parent_id), parent_kind = sqlc.narg(parent_kind)
WHERE id = sqlc.arg(id);

-- name: SessionParentOf :one
SELECT parent_session_id FROM sessions WHERE id = sqlc.arg(id);

-- name: ModelUsageImport :exec
-- One (model, task, billing route) row of an imported session, as exported.
INSERT INTO session_model_usage (
    session_id, model, task, billing_provider, billing_base_url, billing_mode,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at, last_seen_at,
    cost_status, cost_source
) VALUES (
    sqlc.arg(session_id), sqlc.arg(model), sqlc.arg(task), sqlc.arg(billing_provider),
    sqlc.arg(billing_base_url), sqlc.arg(billing_mode), sqlc.arg(input_tokens), sqlc.arg(output_tokens),
    sqlc.arg(cache_read_tokens), sqlc.arg(cache_write_tokens), sqlc.arg(reasoning_tokens),
    sqlc.arg(api_call_count), sqlc.arg(estimated_cost_usd), sqlc.arg(actual_cost_usd),
    sqlc.arg(first_seen_at), sqlc.arg(last_seen_at), sqlc.narg(cost_status), sqlc.narg(cost_source)
) ON CONFLICT (session_id, model, task, billing_provider, billing_base_url, billing_mode) DO NOTHING;
