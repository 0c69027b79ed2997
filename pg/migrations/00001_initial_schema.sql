-- sessiondb's PostgreSQL schema, version 1: the SQLite schema's current
-- state (migrations/00001 to 00008 of the SQLite engine) in one step.
--
-- The shapes follow SQLite's so that sqlc generates the same Go types for
-- both engines:
-- - Times are bigint milliseconds since the Unix epoch (UTC), as there.
-- - Every integer is bigint (int64 in Go). Flags stay bigint 0/1 with
--   CHECK constraints, not boolean, because the SQLite code reads them as
--   int64.
-- - REAL becomes double precision (float64; PostgreSQL's real is float4).
-- - Columns keep SQLite's order, so SELECT * maps onto the same struct.
-- - Identifier-like text (ids, sources, users, models, titles) is
--   COLLATE "C": SQLite compares text bytewise, and the id-prefix range
--   scan, keyset paging and the (model, task) order depend on that, whatever
--   collation the database defaults to. Message content keeps the database
--   collation, which the later search stage's lower()/ILIKE need.
-- - Each store lives in its own schema (the connection's search_path), so
--   nothing here names a schema.
--
-- Not here yet: full-text search. SQLite's messages_fts and
-- messages_fts_trigram (FTS5) and their fts_pending queue are replaced in
-- the search stage by a tsvector column with a GIN index and a pg_trgm
-- index on messages.content, kept in the same transaction (no queue).

-- +goose Up

-- sessions: one conversation. parent_session_id links lineage (compression
-- continuations, branches, delegates); ending a parent never deletes a child.
CREATE TABLE sessions (
    id                        text COLLATE "C" PRIMARY KEY NOT NULL,
    source                    text COLLATE "C" NOT NULL DEFAULT 'unknown',
    parent_session_id         text COLLATE "C" REFERENCES sessions (id) ON DELETE SET NULL,
    user_id                   text COLLATE "C",
    model                     text COLLATE "C",
    model_config_json         text,
    system_prompt             text,
    cwd                       text COLLATE "C",
    started_at                bigint NOT NULL,
    ended_at                  bigint,
    end_reason                text,
    -- title is unique per user when set (index below);
    -- title_rank: 0 derived < 1 generated < 2 user.
    title                     text COLLATE "C",
    title_rank                bigint NOT NULL DEFAULT 0 CHECK (title_rank BETWEEN 0 AND 2),
    -- counters are kept in the same transaction as the rows they count.
    message_count             bigint NOT NULL DEFAULT 0,
    tool_call_count           bigint NOT NULL DEFAULT 0,
    input_tokens              bigint NOT NULL DEFAULT 0,
    output_tokens             bigint NOT NULL DEFAULT 0,
    cache_read_tokens         bigint NOT NULL DEFAULT 0,
    cache_write_tokens        bigint NOT NULL DEFAULT 0,
    reasoning_tokens          bigint NOT NULL DEFAULT 0,
    api_call_count            bigint NOT NULL DEFAULT 0,
    estimated_cost_usd        double precision NOT NULL DEFAULT 0,
    actual_cost_usd           double precision NOT NULL DEFAULT 0,
    -- activity: last_activity_at only moves forward.
    last_activity_at          bigint,
    last_activity_description text,
    last_activity_provenance  text,
    -- handoff: a compare-and-set state machine.
    handoff_state             text CHECK (handoff_state IN ('pending', 'running', 'completed', 'failed')),
    handoff_platform          text,
    handoff_holder            text,
    handoff_error             text,
    handoff_updated_at        bigint,
    archived                  bigint NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    pinned                    bigint NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    hidden                    bigint NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
    -- last_read_at: NULL means read, 0 means explicitly unread.
    last_read_at              bigint,
    rewind_count              bigint NOT NULL DEFAULT 0,
    -- why parent_session_id is set; NULL on a root.
    parent_kind               text CHECK (parent_kind IN ('compression', 'branch', 'delegate', 'reset', 'tool')),
    git_branch                text,
    git_repo_root             text,
    billing_provider          text,
    billing_base_url          text,
    billing_mode              text,
    cost_status               text,
    cost_source               text,
    pricing_version           text,
    session_key               text,
    chat_id                   text,
    chat_type                 text,
    thread_id                 text,
    display_name              text,
    origin_json               text,
    -- compression failure cooldown: the later deadline wins.
    compression_retry_after   bigint,
    compression_error         text,
    -- the newest message's created_at, kept by a trigger; NULL until the
    -- first message (the session was last active when it started).
    last_message_at           bigint
);

CREATE INDEX sessions_source_started ON sessions (source, started_at DESC);
CREATE INDEX sessions_parent ON sessions (parent_session_id);
CREATE INDEX sessions_started ON sessions (started_at DESC);
CREATE INDEX sessions_handoff ON sessions (handoff_state, started_at) WHERE handoff_state IS NOT NULL;
CREATE UNIQUE INDEX sessions_title_unique ON sessions (COALESCE(user_id, ''), title) WHERE title IS NOT NULL;
CREATE INDEX sessions_last_active ON sessions (COALESCE(last_message_at, started_at) DESC, id DESC);

-- messages: one turn. id is a sequence, never reused (SQLite's
-- AUTOINCREMENT); BY DEFAULT so a copy between stores may keep ids (a
-- writer that inserts ids of its own must then setval the sequence past
-- them, or later appends collide on the key).
-- Unlike SQLite's single writer, concurrent transactions can commit ids
-- out of order: a reader paging by id may see a lower id appear later.
CREATE TABLE messages (
    id                  bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session_id          text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role                text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content             text NOT NULL DEFAULT '',
    tool_name           text,
    tool_call_id        text,
    tool_calls_json     text,
    reasoning           text,
    finish_reason       text,
    token_count         bigint,
    state               text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'compacted', 'rewound')),
    is_summary          bigint NOT NULL DEFAULT 0 CHECK (is_summary IN (0, 1)),
    idempotency_key     text,
    created_at          bigint NOT NULL,
    -- the id of the message this row was copied from; NULL on an original.
    origin_id           bigint,
    reasoning_details   text,
    platform_message_id text
);

CREATE INDEX messages_session_id ON messages (session_id, id);
CREATE INDEX messages_session_state ON messages (session_id, state, id);
-- Exactly-once appends: a retried key conflicts here (ON CONFLICT).
CREATE UNIQUE INDEX messages_idempotency ON messages (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- SQLite's messages_last_message_at trigger: every writer (appends,
-- imports, continuations, another program) moves last_message_at, and it
-- only moves forward. The function keeps the search_path it was created
-- with, so it updates this store's sessions even when a writer's own
-- search_path names another schema.
-- +goose StatementBegin
CREATE FUNCTION messages_last_message_at() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE sessions SET last_message_at = NEW.created_at
    WHERE id = NEW.session_id AND (last_message_at IS NULL OR last_message_at < NEW.created_at);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER messages_last_message_at AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION messages_last_message_at();

-- meta: store-wide key/value facts (format and generation ids).
CREATE TABLE meta (
    key        text COLLATE "C" PRIMARY KEY NOT NULL,
    value      text NOT NULL,
    updated_at bigint NOT NULL
);

-- compression_locks: at most one compressor per session.
CREATE TABLE compression_locks (
    session_id  text COLLATE "C" PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    holder      text NOT NULL,
    acquired_at bigint NOT NULL,
    expires_at  bigint NOT NULL
);

CREATE INDEX compression_locks_expires ON compression_locks (expires_at);

-- turn_leases: one turn in flight per conversation (its lineage root).
CREATE TABLE turn_leases (
    conversation_id text COLLATE "C" PRIMARY KEY NOT NULL,
    holder          text NOT NULL,
    acquired_at     bigint NOT NULL,
    expires_at      bigint NOT NULL
);

CREATE INDEX turn_leases_expires ON turn_leases (expires_at);

-- session_model_usage: usage per (session, model, task).
CREATE TABLE session_model_usage (
    session_id         text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    model              text COLLATE "C" NOT NULL DEFAULT '',
    task               text COLLATE "C" NOT NULL DEFAULT '',
    input_tokens       bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    reasoning_tokens   bigint NOT NULL DEFAULT 0,
    api_call_count     bigint NOT NULL DEFAULT 0,
    estimated_cost_usd double precision NOT NULL DEFAULT 0,
    actual_cost_usd    double precision NOT NULL DEFAULT 0,
    first_seen_at      bigint NOT NULL,
    last_seen_at       bigint NOT NULL,
    billing_provider   text,
    billing_base_url   text,
    billing_mode       text,
    cost_status        text,
    cost_source        text,
    PRIMARY KEY (session_id, model, task)
);

CREATE INDEX session_model_usage_model ON session_model_usage (model);

-- model_switches: the model a session changed to, and after which message.
CREATE TABLE model_switches (
    id               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session_id       text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    from_model       text,
    to_model         text NOT NULL,
    provider         text,
    after_message_id bigint NOT NULL DEFAULT 0,
    switched_at      bigint NOT NULL
);

CREATE INDEX model_switches_session ON model_switches (session_id, id);

-- imported_sessions: sessions copied from another store, and the source's
-- fingerprint of each, so a re-import updates instead of duplicating.
CREATE TABLE imported_sessions (
    session_id  text COLLATE "C" PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    origin      text NOT NULL,
    fingerprint text NOT NULL,
    imported_at bigint NOT NULL,
    updated_at  bigint NOT NULL
);

-- +goose Down
DROP TABLE imported_sessions;
DROP TABLE model_switches;
DROP TABLE session_model_usage;
DROP TABLE turn_leases;
DROP TABLE compression_locks;
DROP TABLE meta;
DROP TRIGGER messages_last_message_at ON messages;
DROP FUNCTION messages_last_message_at();
DROP TABLE messages;
DROP TABLE sessions;
