-- name: SessionUsageAdd :execrows
-- Delta mode: adds to the session's running totals.
UPDATE sessions
SET input_tokens = input_tokens + sqlc.arg(input_tokens),
    output_tokens = output_tokens + sqlc.arg(output_tokens),
    cache_read_tokens = cache_read_tokens + sqlc.arg(cache_read_tokens),
    cache_write_tokens = cache_write_tokens + sqlc.arg(cache_write_tokens),
    reasoning_tokens = reasoning_tokens + sqlc.arg(reasoning_tokens),
    api_call_count = api_call_count + sqlc.arg(api_call_count),
    estimated_cost_usd = estimated_cost_usd + sqlc.arg(estimated_cost_usd),
    actual_cost_usd = actual_cost_usd + sqlc.arg(actual_cost_usd)
WHERE id = sqlc.arg(id);

-- name: SessionUsageSet :execrows
-- Absolute mode: the caller knows the session's totals.
UPDATE sessions
SET input_tokens = sqlc.arg(input_tokens),
    output_tokens = sqlc.arg(output_tokens),
    cache_read_tokens = sqlc.arg(cache_read_tokens),
    cache_write_tokens = sqlc.arg(cache_write_tokens),
    reasoning_tokens = sqlc.arg(reasoning_tokens),
    api_call_count = sqlc.arg(api_call_count),
    estimated_cost_usd = sqlc.arg(estimated_cost_usd),
    actual_cost_usd = sqlc.arg(actual_cost_usd)
WHERE id = sqlc.arg(id);

-- name: SessionUsageGet :one
SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
       api_call_count, estimated_cost_usd, actual_cost_usd
FROM sessions WHERE id = sqlc.arg(id);

-- name: ModelUsageAdd :exec
-- Adds a delta to the (session, model, task) row, creating it on first use.
-- A report that names no billing route keeps the route the row already has.
-- The existing row's columns are named by table: PostgreSQL's DO UPDATE
-- sees the existing row and excluded side by side.
INSERT INTO session_model_usage (
    session_id, model, task, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at, last_seen_at,
    billing_provider, billing_base_url, billing_mode, cost_status, cost_source
) VALUES (
    sqlc.arg(session_id), sqlc.arg(model), sqlc.arg(task), sqlc.arg(input_tokens), sqlc.arg(output_tokens),
    sqlc.arg(cache_read_tokens), sqlc.arg(cache_write_tokens), sqlc.arg(reasoning_tokens),
    sqlc.arg(api_call_count), sqlc.arg(estimated_cost_usd), sqlc.arg(actual_cost_usd),
    sqlc.arg(seen_at), sqlc.arg(seen_at), sqlc.narg(billing_provider), sqlc.narg(billing_base_url),
    sqlc.narg(billing_mode), sqlc.narg(cost_status), sqlc.narg(cost_source)
) ON CONFLICT (session_id, model, task) DO UPDATE SET
    input_tokens = session_model_usage.input_tokens + excluded.input_tokens,
    output_tokens = session_model_usage.output_tokens + excluded.output_tokens,
    cache_read_tokens = session_model_usage.cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = session_model_usage.cache_write_tokens + excluded.cache_write_tokens,
    reasoning_tokens = session_model_usage.reasoning_tokens + excluded.reasoning_tokens,
    api_call_count = session_model_usage.api_call_count + excluded.api_call_count,
    estimated_cost_usd = session_model_usage.estimated_cost_usd + excluded.estimated_cost_usd,
    actual_cost_usd = session_model_usage.actual_cost_usd + excluded.actual_cost_usd,
    last_seen_at = GREATEST(session_model_usage.last_seen_at, excluded.last_seen_at),
    billing_provider = COALESCE(excluded.billing_provider, session_model_usage.billing_provider),
    billing_base_url = COALESCE(excluded.billing_base_url, session_model_usage.billing_base_url),
    billing_mode = COALESCE(excluded.billing_mode, session_model_usage.billing_mode),
    cost_status = COALESCE(excluded.cost_status, session_model_usage.cost_status),
    cost_source = COALESCE(excluded.cost_source, session_model_usage.cost_source);

-- name: ModelUsageBySession :many
-- The same columns as ModelUsageTotals, so one mapping serves both.
SELECT model, task, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
       reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd,
       first_seen_at, last_seen_at
FROM session_model_usage
WHERE session_id = sqlc.arg(session_id)
ORDER BY model, task;

-- name: UsageTotals :one
-- Session totals (main loop only) over the sessions a filter selects; the
-- same columns as SessionUsageGet.
SELECT CAST(COALESCE(SUM(input_tokens), 0) AS bigint) AS input_tokens,
       CAST(COALESCE(SUM(output_tokens), 0) AS bigint) AS output_tokens,
       CAST(COALESCE(SUM(cache_read_tokens), 0) AS bigint) AS cache_read_tokens,
       CAST(COALESCE(SUM(cache_write_tokens), 0) AS bigint) AS cache_write_tokens,
       CAST(COALESCE(SUM(reasoning_tokens), 0) AS bigint) AS reasoning_tokens,
       CAST(COALESCE(SUM(api_call_count), 0) AS bigint) AS api_call_count,
       CAST(COALESCE(SUM(estimated_cost_usd), 0) AS double precision) AS estimated_cost_usd,
       CAST(COALESCE(SUM(actual_cost_usd), 0) AS double precision) AS actual_cost_usd
FROM sessions
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR source = sqlc.narg(source))
  AND started_at >= sqlc.arg(since);

-- name: ModelUsageTotals :many
-- Per (model, task) sums over the sessions a filter selects.
SELECT u.model, u.task,
       CAST(SUM(u.input_tokens) AS bigint) AS input_tokens,
       CAST(SUM(u.output_tokens) AS bigint) AS output_tokens,
       CAST(SUM(u.cache_read_tokens) AS bigint) AS cache_read_tokens,
       CAST(SUM(u.cache_write_tokens) AS bigint) AS cache_write_tokens,
       CAST(SUM(u.reasoning_tokens) AS bigint) AS reasoning_tokens,
       CAST(SUM(u.api_call_count) AS bigint) AS api_call_count,
       CAST(SUM(u.estimated_cost_usd) AS double precision) AS estimated_cost_usd,
       CAST(SUM(u.actual_cost_usd) AS double precision) AS actual_cost_usd,
       CAST(MIN(u.first_seen_at) AS bigint) AS first_seen_at,
       CAST(MAX(u.last_seen_at) AS bigint) AS last_seen_at
FROM session_model_usage u JOIN sessions s ON s.id = u.session_id
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND s.started_at >= sqlc.arg(since)
GROUP BY u.model, u.task
ORDER BY u.model, u.task;

-- name: UsageByProvider :many
-- Per billing provider sums of every (model, task) row over the sessions a
-- filter selects; rows recorded without a provider sum under ''.
SELECT CAST(COALESCE(u.billing_provider, '') AS TEXT) AS provider,
       CAST(SUM(u.input_tokens) AS bigint) AS input_tokens,
       CAST(SUM(u.output_tokens) AS bigint) AS output_tokens,
       CAST(SUM(u.cache_read_tokens) AS bigint) AS cache_read_tokens,
       CAST(SUM(u.cache_write_tokens) AS bigint) AS cache_write_tokens,
       CAST(SUM(u.reasoning_tokens) AS bigint) AS reasoning_tokens,
       CAST(SUM(u.api_call_count) AS bigint) AS api_call_count,
       CAST(SUM(u.estimated_cost_usd) AS double precision) AS estimated_cost_usd,
       CAST(SUM(u.actual_cost_usd) AS double precision) AS actual_cost_usd,
       CAST(MIN(u.first_seen_at) AS bigint) AS first_seen_at,
       CAST(MAX(u.last_seen_at) AS bigint) AS last_seen_at
FROM session_model_usage u JOIN sessions s ON s.id = u.session_id
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND s.started_at >= sqlc.arg(since)
GROUP BY COALESCE(u.billing_provider, '')
ORDER BY provider;

-- name: SessionBillingRouteFill :execrows
-- The first-accounted rule: a session without a billing route takes the
-- route of the first main-loop usage reported with one; a session that
-- has one keeps it.
UPDATE sessions
SET billing_provider = sqlc.narg(billing_provider), billing_base_url = sqlc.narg(billing_base_url),
    billing_mode = sqlc.narg(billing_mode)
WHERE id = sqlc.arg(id)
  AND billing_provider IS NULL AND billing_base_url IS NULL AND billing_mode IS NULL;

-- name: SessionBillingRouteSet :execrows
-- An explicit update of the session's billing route (a switch of
-- provider); its usage rows keep the routes they were accounted under.
UPDATE sessions
SET billing_provider = sqlc.narg(billing_provider), billing_base_url = sqlc.narg(billing_base_url),
    billing_mode = sqlc.narg(billing_mode)
WHERE id = sqlc.arg(id);

-- name: SessionModelFill :execrows
-- A session without a model takes the one its main loop reports usage
-- for; a set model is never changed here.
UPDATE sessions SET model = sqlc.arg(model)
WHERE id = sqlc.arg(id) AND (model IS NULL OR model = '');
