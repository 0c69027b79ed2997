-- Version 6: what a conversation carries over time, and what an agent
-- moving from the Python store (Hermes state.db) brings with it.
--
-- sessions gain the workspace (git_branch, git_repo_root beside cwd), the
-- billing fields a cost is computed under (provider, base URL, mode,
-- cost status and source, pricing version), the gateway routing a chat
-- platform finds its session by (session_key, chat_id, chat_type,
-- thread_id, display_name, origin_json), and the compression failure
-- cooldown: a session whose compression failed is not retried before
-- compression_retry_after (ms), and the error is kept.
--
-- messages gain reasoning_details (the provider's structured reasoning,
-- JSON text: thinking blocks with their signatures, which must be sent
-- back verbatim) and platform_message_id (the chat platform's id of the
-- message, to answer or react to it).
--
-- session_model_usage rows gain the billing fields of the model they
-- count.
--
-- model_switches records each change of a session's model mid-conversation:
-- the model before and after, and the newest message written under the old
-- one, so a transcript and its usage show where the switch happened.
--
-- imported_sessions says which sessions came from another store and what
-- their source row looked like when last read (fingerprint), so a second
-- import of the same file reads nothing twice and a later one brings only
-- what changed.

-- +goose Up
ALTER TABLE sessions ADD COLUMN git_branch TEXT;
ALTER TABLE sessions ADD COLUMN git_repo_root TEXT;
ALTER TABLE sessions ADD COLUMN billing_provider TEXT;
ALTER TABLE sessions ADD COLUMN billing_base_url TEXT;
ALTER TABLE sessions ADD COLUMN billing_mode TEXT;
ALTER TABLE sessions ADD COLUMN cost_status TEXT;
ALTER TABLE sessions ADD COLUMN cost_source TEXT;
ALTER TABLE sessions ADD COLUMN pricing_version TEXT;
ALTER TABLE sessions ADD COLUMN session_key TEXT;
ALTER TABLE sessions ADD COLUMN chat_id TEXT;
ALTER TABLE sessions ADD COLUMN chat_type TEXT;
ALTER TABLE sessions ADD COLUMN thread_id TEXT;
ALTER TABLE sessions ADD COLUMN display_name TEXT;
ALTER TABLE sessions ADD COLUMN origin_json TEXT;
ALTER TABLE sessions ADD COLUMN compression_retry_after INTEGER;
ALTER TABLE sessions ADD COLUMN compression_error TEXT;

ALTER TABLE messages ADD COLUMN reasoning_details TEXT;
ALTER TABLE messages ADD COLUMN platform_message_id TEXT;

ALTER TABLE session_model_usage ADD COLUMN billing_provider TEXT;
ALTER TABLE session_model_usage ADD COLUMN billing_base_url TEXT;
ALTER TABLE session_model_usage ADD COLUMN billing_mode TEXT;
ALTER TABLE session_model_usage ADD COLUMN cost_status TEXT;
ALTER TABLE session_model_usage ADD COLUMN cost_source TEXT;

CREATE TABLE model_switches (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id       TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    from_model       TEXT,
    to_model         TEXT    NOT NULL,
    provider         TEXT,
    after_message_id INTEGER NOT NULL DEFAULT 0,
    switched_at      INTEGER NOT NULL
);
CREATE INDEX model_switches_session ON model_switches (session_id, id);

CREATE TABLE imported_sessions (
    session_id  TEXT    PRIMARY KEY NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    origin      TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    imported_at INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- +goose Down
DROP TABLE imported_sessions;
DROP TABLE model_switches;
ALTER TABLE session_model_usage DROP COLUMN cost_source;
ALTER TABLE session_model_usage DROP COLUMN cost_status;
ALTER TABLE session_model_usage DROP COLUMN billing_mode;
ALTER TABLE session_model_usage DROP COLUMN billing_base_url;
ALTER TABLE session_model_usage DROP COLUMN billing_provider;
ALTER TABLE messages DROP COLUMN platform_message_id;
ALTER TABLE messages DROP COLUMN reasoning_details;
ALTER TABLE sessions DROP COLUMN compression_error;
ALTER TABLE sessions DROP COLUMN compression_retry_after;
ALTER TABLE sessions DROP COLUMN origin_json;
ALTER TABLE sessions DROP COLUMN display_name;
ALTER TABLE sessions DROP COLUMN thread_id;
ALTER TABLE sessions DROP COLUMN chat_type;
ALTER TABLE sessions DROP COLUMN chat_id;
ALTER TABLE sessions DROP COLUMN session_key;
ALTER TABLE sessions DROP COLUMN pricing_version;
ALTER TABLE sessions DROP COLUMN cost_source;
ALTER TABLE sessions DROP COLUMN cost_status;
ALTER TABLE sessions DROP COLUMN billing_mode;
ALTER TABLE sessions DROP COLUMN billing_base_url;
ALTER TABLE sessions DROP COLUMN billing_provider;
ALTER TABLE sessions DROP COLUMN git_repo_root;
ALTER TABLE sessions DROP COLUMN git_branch;
