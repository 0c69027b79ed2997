-- The display transcript (store/display.go): command receipts, and the
-- display revision of a session.

-- name: SessionBumpDisplayRevision :exec
-- A visible change of the session's transcript that is not an append
-- (compaction, rewind, import, a receipt): one per change, in its
-- transaction.
UPDATE sessions SET display_revision = display_revision + 1 WHERE id = sqlc.arg(id);

-- name: SessionDisplayRevision :one
SELECT started_at, display_revision FROM sessions WHERE id = sqlc.arg(id);

-- name: MessageLastID :one
-- The session's newest message id in any state (0 when it has none): where
-- a command receipt sits in the display transcript.
SELECT CAST(COALESCE(MAX(id), 0) AS INTEGER) FROM messages WHERE session_id = sqlc.arg(session_id);

-- name: CommandReceiptInsert :execrows
INSERT INTO command_receipts (receipt_id, session_id, command, output, after_message_id, created_at)
VALUES (sqlc.arg(receipt_id), sqlc.arg(session_id), sqlc.arg(command), sqlc.arg(output),
        sqlc.arg(after_message_id), sqlc.arg(created_at))
ON CONFLICT (receipt_id) DO NOTHING;

-- name: CommandReceiptGet :one
SELECT * FROM command_receipts WHERE receipt_id = sqlc.arg(receipt_id);

-- name: CommandReceiptList :many
-- A session's receipts in the order they were recorded.
SELECT * FROM command_receipts WHERE session_id = sqlc.arg(session_id) ORDER BY id;

-- name: MessageDeleteSession :execrows
-- ClearConversation: every message of the session, whatever its state.
DELETE FROM messages WHERE session_id = sqlc.arg(session_id);

-- name: CommandReceiptDeleteSession :execrows
DELETE FROM command_receipts WHERE session_id = sqlc.arg(session_id);
