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

-- name: FTSPendingSliceEnd :one
-- The last id of the oldest row_limit queued rows, and how many they are:
-- one index transaction's slice (db/ftsqueue.go). 0 rows: nothing queued.
SELECT CAST(COALESCE(MAX(id), 0) AS INTEGER) AS last_id, COUNT(*) AS queued
FROM (SELECT id FROM fts_pending ORDER BY id LIMIT sqlc.arg(row_limit));

-- name: FTSPendingClearThrough :exec
-- Empties the queue up to and including last_id (the slice just indexed).
DELETE FROM fts_pending WHERE id <= sqlc.arg(last_id);

-- name: FTSPendingState :one
-- The queue's length and when its longest-waiting row was queued (Unix ms;
-- 0 when the queue is empty or holds only rows queued before migration 5),
-- for Stats and the indexer.
SELECT COUNT(*) AS queued, CAST(COALESCE(MIN(NULLIF(queued_at, 0)), 0) AS INTEGER) AS oldest_queued_at
FROM fts_pending;
