-- Version 3: what a child session is to its parent, and where a copied
-- message came from.
--
-- sessions.parent_kind says why parent_session_id is set: 'compression'
-- (a continuation that carries the conversation on), 'branch', 'delegate'
-- (a sub-agent's session: deleted with its parent), 'reset' or 'tool'.
-- NULL on a root, and on a child whose kind was not given.
--
-- messages.origin_id is the id of the message a row was copied from
-- (compression clones the tail of a conversation into the new rows or the
-- continuation); NULL on an original. A lineage view shows each original
-- once: a copy and its origin are the same turn.

-- +goose Up
ALTER TABLE sessions ADD COLUMN parent_kind TEXT
    CHECK (parent_kind IN ('compression', 'branch', 'delegate', 'reset', 'tool'));
ALTER TABLE messages ADD COLUMN origin_id INTEGER;

-- +goose Down
ALTER TABLE messages DROP COLUMN origin_id;
ALTER TABLE sessions DROP COLUMN parent_kind;
