-- Version 21: one usage row per billing route (issue 34 item 8). A model
-- used through two billing routes (provider, base URL, mode) keeps one row
-- per (model, task, route), as the reference store does, instead of one
-- per (model, task) holding the first route's fields.
--
-- The route joins session_model_usage's primary key, so its three columns
-- become NOT NULL with '' for "no route" (a key column that may be NULL
-- would make every NULL row distinct). ALTER TABLE cannot change a primary
-- key: the table is rebuilt. Nothing refers to session_model_usage (no
-- foreign key, trigger or view names it), so the old table is renamed out
-- of the way, the new one created under the real name (its statement reads
-- as schema.sql has it, which a rename of a new table would not: SQLite
-- quotes a renamed table's name), every row copied (NULL route fields as
-- ''; rows are unique per (session, model, task) before, so per route too),
-- the old table dropped with its index, and the index made again. The
-- columns keep their order (PostgreSQL's ALTER keeps it too).
--
-- Down merges a session's rows of one (model, task) back into one: the
-- counters and costs summed, seen times widened, and the billing fields of
-- the route seen first, as version 20 kept them. Totals survive; the
-- split by route does not.

-- +goose Up
ALTER TABLE session_model_usage RENAME TO session_model_usage_v20;

CREATE TABLE session_model_usage (
    session_id         TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    model              TEXT    NOT NULL DEFAULT '',
    task               TEXT    NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    api_call_count     INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL    NOT NULL DEFAULT 0,
    actual_cost_usd    REAL    NOT NULL DEFAULT 0,
    first_seen_at      INTEGER NOT NULL,
    last_seen_at       INTEGER NOT NULL,
    billing_provider   TEXT    NOT NULL DEFAULT '',
    billing_base_url   TEXT    NOT NULL DEFAULT '',
    billing_mode       TEXT    NOT NULL DEFAULT '',
    cost_status        TEXT,
    cost_source        TEXT,
    PRIMARY KEY (session_id, model, task, billing_provider, billing_base_url, billing_mode)
);

INSERT INTO session_model_usage (
    session_id, model, task, billing_provider, billing_base_url, billing_mode,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,
    api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at, last_seen_at,
    cost_status, cost_source)
SELECT session_id, model, task, COALESCE(billing_provider, ''), COALESCE(billing_base_url, ''),
       COALESCE(billing_mode, ''), input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
       reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at,
       last_seen_at, cost_status, cost_source
FROM session_model_usage_v20;

DROP TABLE session_model_usage_v20;

CREATE INDEX session_model_usage_model ON session_model_usage (model);

-- +goose Down
ALTER TABLE session_model_usage RENAME TO session_model_usage_v21;

CREATE TABLE session_model_usage (
    session_id         TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    model              TEXT    NOT NULL DEFAULT '',
    task               TEXT    NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    api_call_count     INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL    NOT NULL DEFAULT 0,
    actual_cost_usd    REAL    NOT NULL DEFAULT 0,
    first_seen_at      INTEGER NOT NULL,
    last_seen_at       INTEGER NOT NULL, billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, cost_status TEXT, cost_source TEXT,
    PRIMARY KEY (session_id, model, task)
);

INSERT INTO session_model_usage (
    session_id, model, task, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
    reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, first_seen_at, last_seen_at,
    billing_provider, billing_base_url, billing_mode, cost_status, cost_source)
SELECT u.session_id, u.model, u.task, SUM(u.input_tokens), SUM(u.output_tokens), SUM(u.cache_read_tokens),
       SUM(u.cache_write_tokens), SUM(u.reasoning_tokens), SUM(u.api_call_count), SUM(u.estimated_cost_usd),
       SUM(u.actual_cost_usd), MIN(u.first_seen_at), MAX(u.last_seen_at),
       f.billing_provider, f.billing_base_url, f.billing_mode, f.cost_status, f.cost_source
FROM session_model_usage_v21 u
JOIN (SELECT session_id, model, task, NULLIF(billing_provider, '') AS billing_provider,
             NULLIF(billing_base_url, '') AS billing_base_url, NULLIF(billing_mode, '') AS billing_mode,
             cost_status, cost_source,
             ROW_NUMBER() OVER (PARTITION BY session_id, model, task
                                ORDER BY first_seen_at, billing_provider, billing_base_url, billing_mode) AS n
      FROM session_model_usage_v21) f
  ON f.session_id = u.session_id AND f.model = u.model AND f.task = u.task AND f.n = 1
GROUP BY u.session_id, u.model, u.task;

DROP TABLE session_model_usage_v21;

CREATE INDEX session_model_usage_model ON session_model_usage (model);
