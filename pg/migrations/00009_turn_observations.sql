-- As SQLite's migration 20: what a session picker may show of a conversation's turn
-- (issue 35): running, idle or unknown, the last turn's result, and an
-- open request for the user's attention. No message content, no holder is
-- ever read from it by a picker.
--
-- One row per conversation, keyed like turn_leases by the lineage root
-- (compression continuations share it). A fresh turn lease clears the
-- result in the acquire's transaction, so an old result never shows for a
-- new turn; a lease that ends without a finished turn leaves no result,
-- and the picker says unknown (store/picker.go).

-- +goose Up
CREATE TABLE turn_observations (
    conversation_id      text COLLATE "C" PRIMARY KEY NOT NULL,
    holder               text    NOT NULL,
    admitted_at          bigint  NOT NULL,
    turn_id              text,
    result               text    CHECK (result IN ('complete', 'interrupted', 'error')),
    finished_at          bigint,
    attention_kind       text,
    attention_request_id text,
    attention_turn_id    text,
    attention_opened_at  bigint
);

-- +goose Down
DROP TABLE turn_observations;
