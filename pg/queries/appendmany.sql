-- The PostgreSQL engine's own queries, which SQLite has no counterpart of
-- (pg/compat_test.go: pgOnlyFiles).

-- name: MessageInsertMany :one
-- MessageInsert for the new rows of one append, in one statement
-- (pg/insertbatch.go): rows is a JSON array of objects with
-- MessageInsert's columns, inserted in array order, so their identity ids
-- ascend in that order (nextval runs as the ordinality scan yields them);
-- the ids come back sorted as one array, a single row that a pipelined
-- append can read. rows is text, not json: by the simple protocol (a
-- transaction-pooling proxy, pg/pooler.go) pgx would send bytes as bytea.
WITH ins AS (
    INSERT INTO messages (
        session_id, role, content, tool_name, tool_call_id, tool_calls_json, tool_text,
        reasoning, reasoning_details, finish_reason, token_count, is_summary, idempotency_key, created_at,
        parts_json, model, platform_message_id, metadata_json, observed, effect_disposition, reasoning_content, display_kind, uid, call_uid,
        tool_ended_at, tool_duration_ms
    )
    SELECT r.session_id, r.role, r.content, r.tool_name, r.tool_call_id, r.tool_calls_json, r.tool_text,
        r.reasoning, r.reasoning_details, r.finish_reason, r.token_count, r.is_summary, r.idempotency_key, r.created_at,
        r.parts_json, r.model, r.platform_message_id, r.metadata_json, r.observed, r.effect_disposition, r.reasoning_content, r.display_kind, r.uid, r.call_uid,
        r.tool_ended_at, r.tool_duration_ms
    FROM ROWS FROM (json_to_recordset(CAST(CAST(sqlc.arg(rows) AS text) AS json)) AS (
        session_id text, role text, content text, tool_name text, tool_call_id text, tool_calls_json text, tool_text text,
        reasoning text, reasoning_details text, finish_reason text, token_count bigint, is_summary bigint, idempotency_key text, created_at bigint,
        parts_json text, model text, platform_message_id text, metadata_json text, observed bigint, effect_disposition text, reasoning_content text, display_kind text, uid text, call_uid text,
        tool_ended_at bigint, tool_duration_ms bigint
    )) WITH ORDINALITY AS r (
        session_id, role, content, tool_name, tool_call_id, tool_calls_json, tool_text,
        reasoning, reasoning_details, finish_reason, token_count, is_summary, idempotency_key, created_at,
        parts_json, model, platform_message_id, metadata_json, observed, effect_disposition, reasoning_content, display_kind, uid, call_uid,
        tool_ended_at, tool_duration_ms, ord
    )
    ORDER BY r.ord
    RETURNING id
)
SELECT CAST(array_agg(id ORDER BY id) AS bigint[]) AS ids FROM ins;

-- name: SessionAddMessageCountsMany :one
-- SessionAddMessageCounts for several appends in one statement
-- (pg/pipeshare.go): counts is a JSON array of objects, one a session
-- (its id at most once), with the messages and tool calls to add, the
-- appends they are (display_revision moves by one an append), and newest:
-- how many of the session's newest rows last_message_at is read from —
-- every row the transaction has inserted into the session so far, so
-- that appends of one session counted apart or together reach the same
-- row. Text, as MessageInsertMany's. The ids of the sessions it counted
-- come back as one array, a single row that a pipelined append can read;
-- a session missing from it counted nothing (closed by compression, or
-- missing), as SessionAddMessageCounts's 0 rows says.
WITH counted AS (
    UPDATE sessions
    SET message_count = message_count + v.messages,
        tool_call_count = tool_call_count + v.tool_calls,
        display_revision = display_revision + v.appends,
        archived = archived * (1 - auto_archived),
        auto_archived = 0,
        last_message_at = GREATEST(sessions.last_message_at, newest.at),
        conversation_active_at = GREATEST(COALESCE(sessions.conversation_active_at, sessions.started_at), newest.at)
    FROM json_to_recordset(CAST(CAST(sqlc.arg(counts) AS text) AS json))
            AS v (id text, messages bigint, tool_calls bigint, appends bigint, newest bigint)
        CROSS JOIN LATERAL (SELECT max(n.created_at) AS at FROM (
            SELECT m.created_at FROM messages m WHERE m.session_id = v.id
            ORDER BY m.id DESC LIMIT v.newest) n) newest
    WHERE sessions.id = v.id AND sessions.end_reason IS DISTINCT FROM 'compression'
    RETURNING sessions.id
)
SELECT CAST(array_agg(id) AS text[]) AS ids FROM counted;

-- name: SessionAddMessageCountsAll :exec
-- SessionAddMessageCountsMany for appends already answered that every
-- session counted (the batch's counters ride its COMMIT, pg/deferred.go):
-- when one of counts' sessions counted nothing (closed by compression,
-- or missing) it fails, dividing by zero, so the transaction is aborted
-- before its COMMIT and the batch runs again careful, where each append
-- reads its own count. Its UPDATE is SessionAddMessageCountsMany's, word
-- for word (sqlc shares no fragment between queries; pg/deferred_test.go
-- checks they stay alike).
WITH counted AS (
    UPDATE sessions
    SET message_count = message_count + v.messages,
        tool_call_count = tool_call_count + v.tool_calls,
        display_revision = display_revision + v.appends,
        archived = archived * (1 - auto_archived),
        auto_archived = 0,
        last_message_at = GREATEST(sessions.last_message_at, newest.at),
        conversation_active_at = GREATEST(COALESCE(sessions.conversation_active_at, sessions.started_at), newest.at)
    FROM json_to_recordset(CAST(CAST(sqlc.arg(counts) AS text) AS json))
            AS v (id text, messages bigint, tool_calls bigint, appends bigint, newest bigint)
        CROSS JOIN LATERAL (SELECT max(n.created_at) AS at FROM (
            SELECT m.created_at FROM messages m WHERE m.session_id = v.id
            ORDER BY m.id DESC LIMIT v.newest) n) newest
    WHERE sessions.id = v.id AND sessions.end_reason IS DISTINCT FROM 'compression'
    RETURNING sessions.id
)
SELECT 1 / CAST(count(*) = json_array_length(CAST(CAST(sqlc.arg(counts) AS text) AS json)) AS int) FROM counted;
