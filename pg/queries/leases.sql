-- Compression locks (one compressor per session) and turn leases (one turn
-- in flight per conversation, keyed by the lineage root). Every change is
-- conditional on the holder read in the same transaction: a lease changes
-- hands only through a compare-and-set.

-- name: CompressionLockGet :one
SELECT * FROM compression_locks WHERE session_id = sqlc.arg(session_id);

-- name: CompressionLockInsert :execrows
INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at)
VALUES (sqlc.arg(session_id), sqlc.arg(holder), sqlc.arg(acquired_at), sqlc.arg(expires_at))
ON CONFLICT (session_id) DO NOTHING;

-- name: CompressionLockExtend :execrows
-- Refresh checks the holder only, so an owner can revive its own expired lock.
UPDATE compression_locks SET expires_at = sqlc.arg(expires_at)
WHERE session_id = sqlc.arg(session_id) AND holder = sqlc.arg(holder);

-- name: CompressionLockDelete :execrows
DELETE FROM compression_locks
WHERE session_id = sqlc.arg(session_id) AND holder = sqlc.arg(holder);

-- name: TurnLeaseGet :one
SELECT * FROM turn_leases WHERE conversation_id = sqlc.arg(conversation_id);

-- name: TurnLeaseInsert :execrows
INSERT INTO turn_leases (conversation_id, holder, acquired_at, expires_at)
VALUES (sqlc.arg(conversation_id), sqlc.arg(holder), sqlc.arg(acquired_at), sqlc.arg(expires_at))
ON CONFLICT (conversation_id) DO NOTHING;

-- name: TurnLeaseExtend :execrows
UPDATE turn_leases SET expires_at = sqlc.arg(expires_at)
WHERE conversation_id = sqlc.arg(conversation_id) AND holder = sqlc.arg(holder);

-- name: TurnLeaseDelete :execrows
DELETE FROM turn_leases
WHERE conversation_id = sqlc.arg(conversation_id) AND holder = sqlc.arg(holder);

-- name: TurnLeaseSweep :execrows
-- Leases long expired (their holders crashed) are swept by the next acquire.
DELETE FROM turn_leases WHERE expires_at < sqlc.arg(before);
