-- A message may have the role 'note': text kept with a conversation (an
-- agent's note through `sessiondb mcp --allow-notes`) that no converter
-- and no model view ever gives a model as anyone's words, as on SQLite
-- (its migration 17). Only the CHECK on role changes; every stored row
-- already satisfies the new one. Down refuses while a note is stored (the
-- old constraint would not hold), rather than drop or recast it.

-- +goose Up
ALTER TABLE messages DROP CONSTRAINT messages_role_check,
    ADD CONSTRAINT messages_role_check CHECK (role IN ('system', 'user', 'assistant', 'tool', 'note'));

-- +goose Down
ALTER TABLE messages DROP CONSTRAINT messages_role_check,
    ADD CONSTRAINT messages_role_check CHECK (role IN ('system', 'user', 'assistant', 'tool'));
