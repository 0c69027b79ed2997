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
-- Adds a delta to the (session, model, task, billing route) row, creating
-- it on first use: one model used through two routes keeps a row per
-- route ('' fields: no route named). A report that names no cost status
-- or source keeps the row's.
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
    sqlc.arg(seen_at), sqlc.arg(seen_at), sqlc.narg(cost_status), sqlc.narg(cost_source)
) ON CONFLICT (session_id, model, task, billing_provider, billing_base_url, billing_mode) DO UPDATE SET
    input_tokens = input_tokens + excluded.input_tokens,
    output_tokens = output_tokens + excluded.output_tokens,
    cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
    reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
    api_call_count = api_call_count + excluded.api_call_count,
    estimated_cost_usd = estimated_cost_usd + excluded.estimated_cost_usd,
    actual_cost_usd = actual_cost_usd + excluded.actual_cost_usd,
    last_seen_at = MAX(last_seen_at, excluded.last_seen_at),
    cost_status = COALESCE(excluded.cost_status, cost_status),
    cost_source = COALESCE(excluded.cost_source, cost_source);

-- name: ModelUsageBySession :many
-- A session's rows, one per (model, task, billing route), in key order.
SELECT model, task, billing_provider, billing_base_url, billing_mode, cost_status, cost_source,
       input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
       reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd,
       first_seen_at, last_seen_at
FROM session_model_usage
WHERE session_id = sqlc.arg(session_id)
ORDER BY model, task, billing_provider, billing_base_url, billing_mode;

-- name: UsageTotals :one
-- Session totals (main loop only) over the sessions a filter selects; the
-- same columns as SessionUsageGet.
SELECT CAST(COALESCE(SUM(input_tokens), 0) AS INTEGER) AS input_tokens,
       CAST(COALESCE(SUM(output_tokens), 0) AS INTEGER) AS output_tokens,
       CAST(COALESCE(SUM(cache_read_tokens), 0) AS INTEGER) AS cache_read_tokens,
       CAST(COALESCE(SUM(cache_write_tokens), 0) AS INTEGER) AS cache_write_tokens,
       CAST(COALESCE(SUM(reasoning_tokens), 0) AS INTEGER) AS reasoning_tokens,
       CAST(COALESCE(SUM(api_call_count), 0) AS INTEGER) AS api_call_count,
       CAST(COALESCE(SUM(estimated_cost_usd), 0) AS REAL) AS estimated_cost_usd,
       CAST(COALESCE(SUM(actual_cost_usd), 0) AS REAL) AS actual_cost_usd
FROM sessions
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR source = sqlc.narg(source))
  AND started_at >= sqlc.arg(since);

-- name: ModelUsageTotals :many
-- Per (model, task) sums over the sessions a filter selects, every billing
-- route of a model summed into its row.
SELECT u.model, u.task,
       CAST(SUM(u.input_tokens) AS INTEGER) AS input_tokens,
       CAST(SUM(u.output_tokens) AS INTEGER) AS output_tokens,
       CAST(SUM(u.cache_read_tokens) AS INTEGER) AS cache_read_tokens,
       CAST(SUM(u.cache_write_tokens) AS INTEGER) AS cache_write_tokens,
       CAST(SUM(u.reasoning_tokens) AS INTEGER) AS reasoning_tokens,
       CAST(SUM(u.api_call_count) AS INTEGER) AS api_call_count,
       CAST(SUM(u.estimated_cost_usd) AS REAL) AS estimated_cost_usd,
       CAST(SUM(u.actual_cost_usd) AS REAL) AS actual_cost_usd,
       CAST(MIN(u.first_seen_at) AS INTEGER) AS first_seen_at,
       CAST(MAX(u.last_seen_at) AS INTEGER) AS last_seen_at
FROM session_model_usage u JOIN sessions s ON s.id = u.session_id
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND s.started_at >= sqlc.arg(since)
GROUP BY u.model, u.task
ORDER BY u.model, u.task;

-- name: UsageByProvider :many
-- Per billing provider sums of every (model, task) row over the sessions a
-- filter selects; rows recorded without a provider sum under ''.
SELECT CAST(u.billing_provider AS TEXT) AS provider,
       CAST(SUM(u.input_tokens) AS INTEGER) AS input_tokens,
       CAST(SUM(u.output_tokens) AS INTEGER) AS output_tokens,
       CAST(SUM(u.cache_read_tokens) AS INTEGER) AS cache_read_tokens,
       CAST(SUM(u.cache_write_tokens) AS INTEGER) AS cache_write_tokens,
       CAST(SUM(u.reasoning_tokens) AS INTEGER) AS reasoning_tokens,
       CAST(SUM(u.api_call_count) AS INTEGER) AS api_call_count,
       CAST(SUM(u.estimated_cost_usd) AS REAL) AS estimated_cost_usd,
       CAST(SUM(u.actual_cost_usd) AS REAL) AS actual_cost_usd,
       CAST(MIN(u.first_seen_at) AS INTEGER) AS first_seen_at,
       CAST(MAX(u.last_seen_at) AS INTEGER) AS last_seen_at
FROM session_model_usage u JOIN sessions s ON s.id = u.session_id
WHERE (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND s.started_at >= sqlc.arg(since)
GROUP BY u.billing_provider
ORDER BY provider;

-- name: SessionBillingRouteSet :execrows
-- The session's billing route, all three fields together: the route of the
-- latest main-loop report that carried usage, or an explicit update (a
-- switch of provider). Its usage rows keep the routes they were accounted
-- under.
UPDATE sessions
SET billing_provider = sqlc.narg(billing_provider), billing_base_url = sqlc.narg(billing_base_url),
    billing_mode = sqlc.narg(billing_mode)
WHERE id = sqlc.arg(id);

-- name: SessionModelFill :execrows
-- A session without a model takes the one its main loop reports usage
-- for; a set model is never changed here.
UPDATE sessions SET model = sqlc.arg(model)
WHERE id = sqlc.arg(id) AND (model IS NULL OR model = '');

-- Delegation trees: a session, its compression continuations and its
-- delegates, recursively (a delegate's own continuations and delegates
-- too). Branches, resets and tool sessions are conversations of their own.
-- The walk down is a UNION, so a cycle in the parent links ends it.

-- name: DelegationTreeRoot :one
-- The top of id's delegation tree: up through delegate and compression
-- links, at most 1000 steps (a cycle cannot loop forever).
WITH RECURSIVE up (id, parent_id, kind, depth) AS (
    SELECT s.id, s.parent_session_id, s.parent_kind, 0 FROM sessions s WHERE s.id = sqlc.arg(id)
    UNION ALL
    SELECT p.id, p.parent_session_id, p.parent_kind, up.depth + 1
    FROM sessions p JOIN up ON p.id = up.parent_id
    WHERE up.kind IN ('delegate', 'compression') AND up.depth < 1000
)
SELECT CAST(id AS TEXT) FROM up ORDER BY depth DESC LIMIT 1;

-- name: DelegationTreeMembers :many
-- The sessions of the tree under root (root included), by id.
WITH RECURSIVE tree (id) AS (
    SELECT r.id FROM sessions r WHERE r.id = sqlc.arg(root)
    UNION
    SELECT c.id FROM sessions c JOIN tree ON c.parent_session_id = tree.id
    WHERE c.parent_kind IN ('delegate', 'compression')
)
SELECT CAST(id AS TEXT) FROM tree ORDER BY id;

-- name: DelegationTreeUsage :one
-- The main-loop totals of the tree under root, summed; the same columns
-- as SessionUsageGet.
WITH RECURSIVE tree (id) AS (
    SELECT r.id FROM sessions r WHERE r.id = sqlc.arg(root)
    UNION
    SELECT c.id FROM sessions c JOIN tree ON c.parent_session_id = tree.id
    WHERE c.parent_kind IN ('delegate', 'compression')
)
SELECT CAST(COALESCE(SUM(s.input_tokens), 0) AS INTEGER) AS input_tokens,
       CAST(COALESCE(SUM(s.output_tokens), 0) AS INTEGER) AS output_tokens,
       CAST(COALESCE(SUM(s.cache_read_tokens), 0) AS INTEGER) AS cache_read_tokens,
       CAST(COALESCE(SUM(s.cache_write_tokens), 0) AS INTEGER) AS cache_write_tokens,
       CAST(COALESCE(SUM(s.reasoning_tokens), 0) AS INTEGER) AS reasoning_tokens,
       CAST(COALESCE(SUM(s.api_call_count), 0) AS INTEGER) AS api_call_count,
       CAST(COALESCE(SUM(s.estimated_cost_usd), 0) AS REAL) AS estimated_cost_usd,
       CAST(COALESCE(SUM(s.actual_cost_usd), 0) AS REAL) AS actual_cost_usd
FROM sessions s JOIN tree ON s.id = tree.id;

-- name: DelegationTreeModelUsage :many
-- The tree's usage rows summed per (model, task, billing route), in key
-- order.
WITH RECURSIVE tree (id) AS (
    SELECT r.id FROM sessions r WHERE r.id = sqlc.arg(root)
    UNION
    SELECT c.id FROM sessions c JOIN tree ON c.parent_session_id = tree.id
    WHERE c.parent_kind IN ('delegate', 'compression')
)
SELECT u.model, u.task, u.billing_provider, u.billing_base_url, u.billing_mode,
       CAST(SUM(u.input_tokens) AS INTEGER) AS input_tokens,
       CAST(SUM(u.output_tokens) AS INTEGER) AS output_tokens,
       CAST(SUM(u.cache_read_tokens) AS INTEGER) AS cache_read_tokens,
       CAST(SUM(u.cache_write_tokens) AS INTEGER) AS cache_write_tokens,
       CAST(SUM(u.reasoning_tokens) AS INTEGER) AS reasoning_tokens,
       CAST(SUM(u.api_call_count) AS INTEGER) AS api_call_count,
       CAST(SUM(u.estimated_cost_usd) AS REAL) AS estimated_cost_usd,
       CAST(SUM(u.actual_cost_usd) AS REAL) AS actual_cost_usd,
       CAST(MIN(u.first_seen_at) AS INTEGER) AS first_seen_at,
       CAST(MAX(u.last_seen_at) AS INTEGER) AS last_seen_at
FROM session_model_usage u JOIN tree ON u.session_id = tree.id
GROUP BY u.model, u.task, u.billing_provider, u.billing_base_url, u.billing_mode
ORDER BY u.model, u.task, u.billing_provider, u.billing_base_url, u.billing_mode;
