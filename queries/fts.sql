-- name: FTSProbe :one
-- One query through the word index (Verify's FTS read probe).
SELECT COUNT(*) FROM messages_fts(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSTrigramProbe :one
-- One query through the trigram index.
SELECT COUNT(*) FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSPendingAny :one
-- Whether anything waits for the indexes: new rows (past the mark),
-- edited rows to index again (fts_pending) or deleted and edited rows'
-- old text to forget (fts_deleted).
SELECT EXISTS (SELECT 1 FROM fts_pending
               UNION ALL SELECT 1 FROM fts_deleted
               UNION ALL SELECT 1 FROM messages WHERE id > (SELECT indexed_through FROM fts_mark)) AS queued;

-- name: FTSEditsAny :one
-- Whether edited rows wait to be indexed again.
SELECT EXISTS (SELECT 1 FROM fts_pending) AS waiting;

-- name: FTSMarkSliceEnd :one
-- The mark, and the last id and count of the oldest row_limit messages
-- past it: the new rows of one index transaction's slice
-- (db/ftsqueue.go). last_id is the mark when none is past it.
SELECT f.indexed_through AS mark,
       CAST(COALESCE(MAX(w.id), f.indexed_through) AS INTEGER) AS last_id,
       COUNT(w.id) AS queued,
       f.behind_since
FROM fts_mark f
LEFT JOIN (SELECT id FROM messages WHERE id > (SELECT indexed_through FROM fts_mark) ORDER BY id LIMIT sqlc.arg(row_limit)) w ON 1
GROUP BY f.id;

-- name: FTSMarkAdvance :exec
-- Moves the mark past the rows a slice just indexed; once none is left
-- past it the index has caught up and behind_since starts over.
UPDATE fts_mark
SET indexed_through = sqlc.arg(last_id),
    behind_since = CASE WHEN EXISTS (SELECT 1 FROM messages WHERE id > sqlc.arg(last_id)) THEN behind_since ELSE 0 END;

-- name: FTSMarkRestore :exec
-- Puts back a missing mark row while the index is marked stale (the
-- rebuild that clears the stale mark sets it again).
INSERT OR IGNORE INTO fts_mark (id, indexed_through) VALUES (1, COALESCE((SELECT MAX(id) FROM messages), 0));

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
-- How many changes wait for the indexes (new rows past the mark, edited
-- rows, deleted rows' old text), and since when the longest-waiting has
-- (Unix ms; 0 when none does, or none says): the first entry of each
-- queue by seq (reading every fts_deleted row's time would walk the
-- copied texts); for the rows past the mark, the first one's created_at
-- (an append's own time) but no earlier than behind_since (a row imported
-- with an old time has waited only since it was appended). behind is
-- whether behind_since is set: with no row past the mark too (the rows
-- appended were deleted before they were indexed) a slice must run to
-- clear it. (ASCII only in these comments: sqlc cuts a query's text short by
-- the extra bytes of any other character before it.)
SELECT CAST((SELECT COUNT(*) FROM fts_pending) + (SELECT COUNT(*) FROM fts_deleted)
            + (SELECT COUNT(*) FROM messages WHERE id > f.indexed_through) AS INTEGER) AS queued,
       CAST(COALESCE((SELECT MIN(t) FROM (
           SELECT NULLIF((SELECT queued_at FROM fts_pending ORDER BY seq LIMIT 1), 0) AS t
           UNION ALL SELECT NULLIF((SELECT queued_at FROM fts_deleted ORDER BY seq LIMIT 1), 0)
           UNION ALL SELECT NULLIF(MAX(m.behind_since, (SELECT created_at FROM messages WHERE id > m.indexed_through ORDER BY id LIMIT 1)), 0)
                     FROM fts_mark m WHERE EXISTS (SELECT 1 FROM messages WHERE id > m.indexed_through))), 0) AS INTEGER) AS oldest_queued_at,
       CAST(f.behind_since <> 0 AS INTEGER) AS behind
FROM fts_mark f;
