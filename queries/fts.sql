-- name: FTSProbe :one
-- One query through the word index (Verify's FTS read probe).
SELECT COUNT(*) FROM messages_fts(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSTrigramProbe :one
-- One query through the trigram index.
SELECT COUNT(*) FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSPendingAny :one
-- Whether anything waits for the indexes: rows to index (fts_pending) or
-- deleted rows to forget (fts_deleted).
SELECT EXISTS (SELECT 1 FROM fts_pending UNION ALL SELECT 1 FROM fts_deleted) AS queued;

-- name: FTSPendingClear :exec
DELETE FROM fts_pending;

-- name: FTSDeletedClear :exec
DELETE FROM fts_deleted;

-- name: FTSPendingSliceEnd :one
-- The last seq of the oldest row_limit rows queued for indexing whose old
-- text is not waiting to be forgotten, and how many they are: part of one
-- index transaction's slice (db/ftsqueue.go). 0 rows: none to take.
SELECT CAST(COALESCE(MAX(seq), 0) AS INTEGER) AS last_seq, COUNT(*) AS queued
FROM (SELECT seq FROM fts_pending p
      WHERE NOT EXISTS (SELECT 1 FROM fts_deleted d WHERE d.id = p.id)
      ORDER BY seq LIMIT sqlc.arg(row_limit));

-- name: FTSDeletedSliceEnd :one
-- The same for the oldest row_limit deleted rows the indexes still hold.
SELECT CAST(COALESCE(MAX(seq), 0) AS INTEGER) AS last_seq, COUNT(*) AS queued
FROM (SELECT seq FROM fts_deleted ORDER BY seq LIMIT sqlc.arg(row_limit));

-- name: FTSPendingClearThrough :exec
-- Takes the slice just indexed out of the queue: the entries up to and
-- including last_seq that FTSPendingSliceEnd counted.
DELETE FROM fts_pending
WHERE fts_pending.seq <= sqlc.arg(last_seq)
  AND NOT EXISTS (SELECT 1 FROM fts_deleted d WHERE d.id = fts_pending.id);

-- name: FTSDeletedClearThrough :exec
DELETE FROM fts_deleted WHERE seq <= sqlc.arg(last_seq);

-- name: FTSPendingState :one
-- The length of both queues and when their longest-waiting entry was
-- queued (Unix ms; 0 when both are empty), for Stats and the indexer: the
-- first entry of each by seq (reading every fts_deleted row's time would
-- walk the copied texts).
SELECT CAST((SELECT COUNT(*) FROM fts_pending) + (SELECT COUNT(*) FROM fts_deleted) AS INTEGER) AS queued,
       CAST(COALESCE((SELECT MIN(t) FROM (
           SELECT NULLIF((SELECT queued_at FROM fts_pending ORDER BY seq LIMIT 1), 0) AS t
           UNION ALL SELECT NULLIF((SELECT queued_at FROM fts_deleted ORDER BY seq LIMIT 1), 0))), 0) AS INTEGER) AS oldest_queued_at;
