-- name: FTSProbe :one
-- One query through the word index (Verify's FTS read probe).
SELECT COUNT(*) FROM messages_fts(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSTrigramProbe :one
-- One query through the trigram index.
SELECT COUNT(*) FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT));

-- name: FTSIndexPending :exec
-- The writer indexes the rows its transaction queued (migration 4), once,
-- just before COMMIT.
INSERT INTO messages_fts (rowid, content, tool_name)
SELECT m.id, m.content, m.tool_name FROM fts_pending p JOIN messages m ON m.id = p.id
WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale');

-- name: FTSTrigramIndexPending :exec
INSERT INTO messages_fts_trigram (rowid, content)
SELECT m.id, m.content FROM fts_pending p JOIN messages m ON m.id = p.id
WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_stale');

-- name: FTSPendingAny :one
SELECT EXISTS (SELECT 1 FROM fts_pending) AS queued;

-- name: FTSPendingClear :exec
DELETE FROM fts_pending;
