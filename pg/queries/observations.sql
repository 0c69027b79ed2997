-- Turn observations (store/picker.go): what a session picker shows of a
-- conversation's turn, keyed by the lineage root like turn_leases.

-- name: TurnObservationGet :one
SELECT * FROM turn_observations WHERE conversation_id = sqlc.arg(conversation_id);

-- name: TurnObservationAdmit :exec
-- A fresh turn lease: whatever result the last turn left is no longer the
-- conversation's (an old result never shows for a new turn).
INSERT INTO turn_observations (conversation_id, holder, admitted_at)
VALUES (sqlc.arg(conversation_id), sqlc.arg(holder), sqlc.arg(admitted_at))
ON CONFLICT (conversation_id) DO UPDATE SET
    holder = excluded.holder, admitted_at = excluded.admitted_at, turn_id = NULL, result = NULL,
    finished_at = NULL, attention_kind = NULL, attention_request_id = NULL,
    attention_turn_id = NULL, attention_opened_at = NULL;

-- name: TurnObservationBegin :exec
INSERT INTO turn_observations (conversation_id, holder, admitted_at, turn_id)
VALUES (sqlc.arg(conversation_id), sqlc.arg(holder), sqlc.arg(admitted_at), sqlc.arg(turn_id))
ON CONFLICT (conversation_id) DO UPDATE SET
    holder = excluded.holder, admitted_at = excluded.admitted_at, turn_id = excluded.turn_id,
    result = NULL, finished_at = NULL, attention_kind = NULL, attention_request_id = NULL,
    attention_turn_id = NULL, attention_opened_at = NULL;

-- name: TurnObservationFinish :execrows
-- Seals the current turn once: only the turn begun last, only unsealed.
UPDATE turn_observations
SET result = sqlc.arg(result), finished_at = sqlc.arg(finished_at),
    attention_kind = NULL, attention_request_id = NULL, attention_turn_id = NULL, attention_opened_at = NULL
WHERE conversation_id = sqlc.arg(conversation_id) AND turn_id = sqlc.arg(turn_id) AND result IS NULL;

-- name: TurnObservationOpenAttention :execrows
UPDATE turn_observations
SET attention_kind = sqlc.arg(attention_kind), attention_request_id = sqlc.arg(attention_request_id),
    attention_turn_id = turn_id, attention_opened_at = sqlc.arg(attention_opened_at)
WHERE conversation_id = sqlc.arg(conversation_id) AND turn_id = sqlc.arg(turn_id) AND result IS NULL;

-- name: TurnObservationResolveAttention :execrows
UPDATE turn_observations
SET attention_kind = NULL, attention_request_id = NULL, attention_turn_id = NULL, attention_opened_at = NULL
WHERE conversation_id = sqlc.arg(conversation_id) AND turn_id = sqlc.arg(turn_id)
  AND attention_request_id = sqlc.arg(attention_request_id);
