-- Version 19: the display transcript (issue 35).
--
-- sessions.display_revision counts the visible changes of a session's
-- transcript: every write that changes what a display of it shows adds
-- one, in its own transaction (an append in the statement that already
-- counts its messages, SessionAddMessageCounts, so the append path runs no
-- extra statement). A conversation's revision is read from its members'
-- counters (store/display.go).
--
-- messages.display_kind says how a display shows a row ('hidden': the
-- model sees it, no display does); messages.uid is the row's identity, one
-- per occurrence, minted at insert and kept by every copy (compaction,
-- carried tail, export and import).
--
-- command_receipts are the UI's own rows (a slash command and what it
-- printed): shown in the display transcript after the message they
-- followed, never given to a model, never searched, never counted.

-- +goose Up
ALTER TABLE sessions ADD COLUMN display_revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN display_kind TEXT;
ALTER TABLE messages ADD COLUMN uid TEXT;
CREATE TABLE command_receipts (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    receipt_id       TEXT    NOT NULL UNIQUE,
    session_id       TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    command          TEXT    NOT NULL,
    output           TEXT    NOT NULL,
    after_message_id INTEGER NOT NULL,
    created_at       INTEGER NOT NULL
);
CREATE INDEX command_receipts_session ON command_receipts (session_id, id);

-- +goose Down
DROP TABLE command_receipts;
ALTER TABLE messages DROP COLUMN uid;
ALTER TABLE messages DROP COLUMN display_kind;
ALTER TABLE sessions DROP COLUMN display_revision;
