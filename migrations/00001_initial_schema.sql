-- sessiondb schema, version 1: the whole agent domain.
--
-- Time: every *_at column is INTEGER milliseconds since the Unix epoch (UTC).
-- Flags: INTEGER 0/1 with CHECK constraints.
-- JSON: columns named *_json or documented as JSON hold UTF-8 JSON text.

-- +goose Up

-- sessions: one conversation. parent_session_id links lineage (compression
-- continuations, branches, delegates); ending a parent never deletes a child.
CREATE TABLE sessions (
    id                        TEXT    PRIMARY KEY NOT NULL,
    source                    TEXT    NOT NULL DEFAULT 'unknown',
    parent_session_id         TEXT    REFERENCES sessions (id) ON DELETE SET NULL,
    user_id                   TEXT,
    model                     TEXT,
    model_config_json         TEXT,
    system_prompt             TEXT,
    cwd                       TEXT,
    started_at                INTEGER NOT NULL,
    ended_at                  INTEGER,
    end_reason                TEXT,
    -- title is unique across the store when set (index below);
    -- title_rank: 0 derived < 1 generated < 2 user.
    title                     TEXT,
    title_rank                INTEGER NOT NULL DEFAULT 0 CHECK (title_rank BETWEEN 0 AND 2),
    -- counters are kept in the same transaction as the rows they count.
    message_count             INTEGER NOT NULL DEFAULT 0,
    tool_call_count           INTEGER NOT NULL DEFAULT 0,
    input_tokens              INTEGER NOT NULL DEFAULT 0,
    output_tokens             INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens         INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens        INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens          INTEGER NOT NULL DEFAULT 0,
    api_call_count            INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd        REAL    NOT NULL DEFAULT 0,
    actual_cost_usd           REAL    NOT NULL DEFAULT 0,
    -- activity: last_activity_at only moves forward.
    last_activity_at          INTEGER,
    last_activity_description TEXT,
    last_activity_provenance  TEXT,
    -- handoff: a compare-and-set state machine.
    handoff_state             TEXT    CHECK (handoff_state IN ('pending', 'running', 'completed', 'failed')),
    handoff_platform          TEXT,
    handoff_holder            TEXT,
    handoff_error             TEXT,
    handoff_updated_at        INTEGER,
    archived                  INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
    pinned                    INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
    hidden                    INTEGER NOT NULL DEFAULT 0 CHECK (hidden IN (0, 1)),
    -- last_read_at: NULL means read, 0 means explicitly unread.
    last_read_at              INTEGER,
    rewind_count              INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX sessions_source_started ON sessions (source, started_at DESC);
CREATE INDEX sessions_parent ON sessions (parent_session_id);
CREATE INDEX sessions_started ON sessions (started_at DESC);
CREATE INDEX sessions_handoff ON sessions (handoff_state, started_at) WHERE handoff_state IS NOT NULL;
CREATE UNIQUE INDEX sessions_title_unique ON sessions (title) WHERE title IS NOT NULL;

-- messages: one turn element. state: 'active' (live), 'compacted'
-- (summarised by compression: still shown and searched), 'rewound' (hidden).
-- idempotency_key makes an append safe to retry: unique per session.
CREATE TABLE messages (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id      TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT    NOT NULL DEFAULT '',
    tool_name       TEXT,
    tool_call_id    TEXT,
    tool_calls_json TEXT,
    reasoning       TEXT,
    finish_reason   TEXT,
    token_count     INTEGER,
    state           TEXT    NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'compacted', 'rewound')),
    is_summary      INTEGER NOT NULL DEFAULT 0 CHECK (is_summary IN (0, 1)),
    idempotency_key TEXT,
    created_at      INTEGER NOT NULL
);

CREATE INDEX messages_session_id ON messages (session_id, id);
CREATE INDEX messages_session_state ON messages (session_id, state, id);
CREATE UNIQUE INDEX messages_idempotency ON messages (session_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- messages_fts: external-content FTS5 over message text and tool names,
-- kept by the triggers below. messages_fts_trigram finds CJK and other
-- unsegmented scripts (and substrings) through FTS5's trigram tokenizer.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content, tool_name,
    content = 'messages', content_rowid = 'id', tokenize = 'unicode61'
);

CREATE VIRTUAL TABLE messages_fts_trigram USING fts5 (
    content,
    content = 'messages', content_rowid = 'id', tokenize = 'trigram'
);

-- +goose StatementBegin
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, tool_name ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, tool_name) VALUES ('delete', old.id, old.content, old.tool_name);
    INSERT INTO messages_fts_trigram (messages_fts_trigram, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts (rowid, content, tool_name) VALUES (new.id, new.content, new.tool_name);
    INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);
END;
-- +goose StatementEnd

-- meta: store-wide key/values (caller keys and sessiondb's own, e.g. the
-- file generation id).
CREATE TABLE meta (
    key        TEXT    PRIMARY KEY NOT NULL,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
);

-- compression_locks: at most one compressor per session; a lock is
-- reclaimed only when expired or its holder process is provably dead.
CREATE TABLE compression_locks (
    session_id  TEXT    PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    holder      TEXT    NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX compression_locks_expires ON compression_locks (expires_at);

-- turn_leases: at most one turn in flight per conversation, keyed by the
-- lineage root session id.
CREATE TABLE turn_leases (
    conversation_id TEXT    PRIMARY KEY NOT NULL,
    holder          TEXT    NOT NULL,
    acquired_at     INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL
);
CREATE INDEX turn_leases_expires ON turn_leases (expires_at);

-- session_model_usage: token and cost counters per session, model and task
-- ('' is the main loop; others are auxiliary tasks such as 'title').
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
    PRIMARY KEY (session_id, model, task)
);
CREATE INDEX session_model_usage_model ON session_model_usage (model);

-- +goose Down
DROP TABLE session_model_usage;
DROP TABLE turn_leases;
DROP TABLE compression_locks;
DROP TABLE meta;
DROP TRIGGER messages_fts_update;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_insert;
DROP TABLE messages_fts_trigram;
DROP TABLE messages_fts;
DROP TABLE messages;
DROP TABLE sessions;
