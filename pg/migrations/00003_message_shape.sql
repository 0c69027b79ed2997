-- Messages keep the shape providers send, and a chat platform's message
-- id names at most one message of a session (SQLite's version 9).
--
-- parts_json is the content as ordered parts (a JSON array; NULL for a
-- message written as plain content), model the model that wrote the
-- message, metadata_json the caller's JSON object: text, stored as given
-- and returned byte-exact (json or jsonb would re-encode it).
--
-- platform_message_id becomes unique within a session, so a webhook
-- delivered twice is recognised as one message. Rows that already share
-- one in a session keep it on the first (lowest id); each later row moves
-- its id into its own metadata_json under "duplicate_platform_message_id",
-- in the bytes SQLite's json_object writes, so the two engines agree.

-- +goose Up
ALTER TABLE messages
    ADD COLUMN parts_json text,
    ADD COLUMN model text,
    ADD COLUMN metadata_json text;

UPDATE messages m
SET metadata_json = '{"duplicate_platform_message_id":' || to_json(m.platform_message_id)::text || '}',
    platform_message_id = NULL
WHERE m.platform_message_id IS NOT NULL
  AND EXISTS (SELECT 1 FROM messages f
              WHERE f.session_id = m.session_id
                AND f.platform_message_id = m.platform_message_id
                AND f.id < m.id);

CREATE UNIQUE INDEX messages_platform_id ON messages (session_id, platform_message_id)
WHERE platform_message_id IS NOT NULL;

-- +goose Down
DROP INDEX messages_platform_id;
UPDATE messages
SET platform_message_id = metadata_json::json ->> 'duplicate_platform_message_id'
WHERE platform_message_id IS NULL AND metadata_json LIKE '{"duplicate_platform_message_id":%';
ALTER TABLE messages
    DROP COLUMN metadata_json,
    DROP COLUMN model,
    DROP COLUMN parts_json;
