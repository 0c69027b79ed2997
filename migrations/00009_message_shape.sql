-- Version 9: messages keep the shape providers send, and a chat
-- platform's message id names at most one message of a session.
--
-- parts_json is the content as ordered parts (a JSON array of text, image
-- and file references, tool use and tool results; NULL for a message
-- written as plain content), model the model that wrote the message, and
-- metadata_json the caller's free-form JSON object. All three are stored
-- as given and returned byte-exact.
--
-- platform_message_id becomes unique within a session, so that a webhook
-- delivered twice is recognised as one message (the store answers the
-- re-delivery with the first message's id). Files written before may
-- already hold one platform id on several rows of a session (a Hermes
-- import copied them as the source had them): the first row (lowest id)
-- keeps it, and each later row moves its id into its own metadata_json
-- under "duplicate_platform_message_id" — nothing is lost, and the rule is
-- the one the Hermes import applies to rows it brings in. metadata_json
-- is new here, so no caller's metadata is overwritten.

-- +goose Up
ALTER TABLE messages ADD COLUMN parts_json TEXT;
ALTER TABLE messages ADD COLUMN model TEXT;
ALTER TABLE messages ADD COLUMN metadata_json TEXT;

UPDATE messages
SET metadata_json = json_object('duplicate_platform_message_id', platform_message_id),
    platform_message_id = NULL
WHERE platform_message_id IS NOT NULL
  AND EXISTS (SELECT 1 FROM messages f
              WHERE f.session_id = messages.session_id
                AND f.platform_message_id = messages.platform_message_id
                AND f.id < messages.id);

CREATE UNIQUE INDEX messages_platform_id ON messages (session_id, platform_message_id)
WHERE platform_message_id IS NOT NULL;

-- +goose Down
DROP INDEX messages_platform_id;
UPDATE messages
SET platform_message_id = json_extract(metadata_json, '$.duplicate_platform_message_id')
WHERE platform_message_id IS NULL AND json_valid(metadata_json)
  AND json_type(metadata_json, '$.duplicate_platform_message_id') = 'text';
ALTER TABLE messages DROP COLUMN metadata_json;
ALTER TABLE messages DROP COLUMN model;
ALTER TABLE messages DROP COLUMN parts_json;
