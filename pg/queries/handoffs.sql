-- Handoffs are a compare-and-set state machine: every transition is one
-- conditional UPDATE whose WHERE clause names the state it leaves, so two
-- racing callers can never both move the same row.

-- name: SessionHandoffRequest :execrows
-- none, completed or failed -> pending.
UPDATE sessions
SET handoff_state = 'pending', handoff_platform = sqlc.arg(platform), handoff_holder = NULL,
    handoff_error = NULL, handoff_updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'));

-- name: SessionHandoffClaim :execrows
-- pending -> running, owned by holder.
UPDATE sessions
SET handoff_state = 'running', handoff_holder = sqlc.arg(holder), handoff_updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND handoff_state = 'pending';

-- name: SessionHandoffFinish :execrows
-- running (by holder) -> completed or failed.
UPDATE sessions
SET handoff_state = sqlc.arg(state), handoff_error = sqlc.narg(error), handoff_updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND handoff_state = 'running' AND handoff_holder = sqlc.arg(holder);

-- name: SessionHandoffReclaimStale :execrows
-- running, untouched since before the cutoff -> pending, holder cleared.
UPDATE sessions
SET handoff_state = 'pending', handoff_holder = NULL, handoff_updated_at = sqlc.arg(updated_at)
WHERE handoff_state = 'running' AND handoff_updated_at < sqlc.arg(cutoff);

-- name: SessionHandoffGet :one
SELECT handoff_state, handoff_platform, handoff_holder, handoff_error, handoff_updated_at
FROM sessions WHERE id = sqlc.arg(id);
