-- name: FTSProbe :one
-- One query through the word index (Verify's FTS read probe).
SELECT COUNT(*) FROM messages_fts(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSTrigramProbe :one
-- One query through the trigram index.
SELECT COUNT(*) FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSPendingAny :one
SELECT EXISTS (SELECT 1 FROM fts_pending) AS queued;

-- name: FTSPendingClear :exec
DELETE FROM fts_pending;
