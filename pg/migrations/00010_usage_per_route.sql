-- As SQLite's migration 21: one usage row per billing route (issue 34
-- item 8). A model used through two billing routes (provider, base URL,
-- mode) keeps one row per (model, task, route), as the reference store
-- does. The route joins the primary key; its columns become NOT NULL with
-- '' for "no route" (a primary key column cannot be NULL) and byte-ordered
-- (COLLATE "C", as the key's other text columns), so both engines list a
-- session's rows in one order. Rows were unique per (session, model, task),
-- so they are unique per route too: none is merged or lost.
--
-- Down merges a session's rows of one (model, task) back into one (summed,
-- the billing fields of the route seen first), as version 9 kept them.

-- +goose Up
UPDATE session_model_usage SET billing_provider = COALESCE(billing_provider, ''),
    billing_base_url = COALESCE(billing_base_url, ''), billing_mode = COALESCE(billing_mode, '')
WHERE billing_provider IS NULL OR billing_base_url IS NULL OR billing_mode IS NULL;

ALTER TABLE session_model_usage
    ALTER COLUMN billing_provider TYPE text COLLATE "C",
    ALTER COLUMN billing_provider SET DEFAULT '',
    ALTER COLUMN billing_provider SET NOT NULL,
    ALTER COLUMN billing_base_url TYPE text COLLATE "C",
    ALTER COLUMN billing_base_url SET DEFAULT '',
    ALTER COLUMN billing_base_url SET NOT NULL,
    ALTER COLUMN billing_mode TYPE text COLLATE "C",
    ALTER COLUMN billing_mode SET DEFAULT '',
    ALTER COLUMN billing_mode SET NOT NULL,
    DROP CONSTRAINT session_model_usage_pkey,
    ADD PRIMARY KEY (session_id, model, task, billing_provider, billing_base_url, billing_mode);

-- +goose Down
CREATE TEMPORARY TABLE session_model_usage_v10 ON COMMIT DROP AS
SELECT u.session_id, u.model, u.task, SUM(u.input_tokens) AS input_tokens, SUM(u.output_tokens) AS output_tokens,
       SUM(u.cache_read_tokens) AS cache_read_tokens, SUM(u.cache_write_tokens) AS cache_write_tokens,
       SUM(u.reasoning_tokens) AS reasoning_tokens, SUM(u.api_call_count) AS api_call_count,
       SUM(u.estimated_cost_usd) AS estimated_cost_usd, SUM(u.actual_cost_usd) AS actual_cost_usd,
       MIN(u.first_seen_at) AS first_seen_at, MAX(u.last_seen_at) AS last_seen_at,
       (array_agg(NULLIF(u.billing_provider, '') ORDER BY u.first_seen_at, u.billing_provider, u.billing_base_url, u.billing_mode))[1] AS billing_provider,
       (array_agg(NULLIF(u.billing_base_url, '') ORDER BY u.first_seen_at, u.billing_provider, u.billing_base_url, u.billing_mode))[1] AS billing_base_url,
       (array_agg(NULLIF(u.billing_mode, '') ORDER BY u.first_seen_at, u.billing_provider, u.billing_base_url, u.billing_mode))[1] AS billing_mode,
       (array_agg(u.cost_status ORDER BY u.first_seen_at, u.billing_provider, u.billing_base_url, u.billing_mode))[1] AS cost_status,
       (array_agg(u.cost_source ORDER BY u.first_seen_at, u.billing_provider, u.billing_base_url, u.billing_mode))[1] AS cost_source
FROM session_model_usage u
GROUP BY u.session_id, u.model, u.task;

DELETE FROM session_model_usage;

ALTER TABLE session_model_usage
    DROP CONSTRAINT session_model_usage_pkey,
    ALTER COLUMN billing_provider DROP NOT NULL,
    ALTER COLUMN billing_provider DROP DEFAULT,
    ALTER COLUMN billing_provider TYPE text COLLATE "default",
    ALTER COLUMN billing_base_url DROP NOT NULL,
    ALTER COLUMN billing_base_url DROP DEFAULT,
    ALTER COLUMN billing_base_url TYPE text COLLATE "default",
    ALTER COLUMN billing_mode DROP NOT NULL,
    ALTER COLUMN billing_mode DROP DEFAULT,
    ALTER COLUMN billing_mode TYPE text COLLATE "default",
    ADD PRIMARY KEY (session_id, model, task);

INSERT INTO session_model_usage (session_id, model, task, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd,
    first_seen_at, last_seen_at, billing_provider, billing_base_url, billing_mode, cost_status, cost_source)
SELECT session_id, model, task, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
       reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at, last_seen_at,
       billing_provider, billing_base_url, billing_mode, cost_status, cost_source
FROM session_model_usage_v10;
