-- The one query of the SQLite engine's hermes.sql that is not the Hermes
-- import: usage reads it. The import itself reads a SQLite state.db into a
-- SQLite store and has no Postgres counterpart (a Postgres store is filled
-- by copying from a SQLite one).

-- name: ModelUsageBillingBySession :many
-- The billing route of each (model, task) row, in ModelUsageBySession's order.
SELECT model, task, billing_provider, billing_base_url, billing_mode, cost_status, cost_source
FROM session_model_usage WHERE session_id = sqlc.arg(session_id) ORDER BY model, task;
