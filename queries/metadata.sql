-- Session metadata over time: model, workspace, system prompt, reopening,
-- and the compression failure cooldown.

-- name: SessionSetModel :execrows
UPDATE sessions SET model = sqlc.arg(model), model_config_json = sqlc.narg(model_config_json)
WHERE id = sqlc.arg(id);

-- name: ModelSwitchInsert :exec
INSERT INTO model_switches (session_id, from_model, to_model, provider, after_message_id, switched_at)
VALUES (sqlc.arg(session_id), sqlc.narg(from_model), sqlc.arg(to_model), sqlc.narg(provider),
        sqlc.arg(after_message_id), sqlc.arg(switched_at));

-- name: ModelSwitchesBySession :many
SELECT * FROM model_switches WHERE session_id = sqlc.arg(session_id) ORDER BY id;

-- name: SessionNewestMessageID :one
SELECT CAST(COALESCE(MAX(id), 0) AS INTEGER) FROM messages WHERE session_id = sqlc.arg(session_id);

-- name: SessionSetWorkspace :execrows
-- Each part is replaced only when its set_ flag is 1 (a NULL value clears).
UPDATE sessions
SET cwd = CASE WHEN CAST(sqlc.arg(set_cwd) AS INTEGER) = 1 THEN sqlc.narg(cwd) ELSE cwd END,
    git_branch = CASE WHEN CAST(sqlc.arg(set_branch) AS INTEGER) = 1 THEN sqlc.narg(git_branch) ELSE git_branch END,
    git_repo_root = CASE WHEN CAST(sqlc.arg(set_root) AS INTEGER) = 1 THEN sqlc.narg(git_repo_root) ELSE git_repo_root END
WHERE id = sqlc.arg(id);

-- name: SessionSetSystemPrompt :execrows
UPDATE sessions SET system_prompt = sqlc.narg(system_prompt) WHERE id = sqlc.arg(id);

-- name: SessionReopen :execrows
-- Guarded in Go first (a parent with a compression continuation is
-- refused); the condition here keeps a concurrent publish from being
-- undone. Ended 'compression' with no continuation may be reopened.
UPDATE sessions SET ended_at = NULL, end_reason = NULL
WHERE sessions.id = sqlc.arg(id) AND sessions.ended_at IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = sessions.id AND c.parent_kind = 'compression');

-- name: SessionCompressionCooldownGet :one
SELECT compression_retry_after, compression_error FROM sessions WHERE id = sqlc.arg(id);

-- name: SessionCompressionCooldownSet :execrows
-- The later deadline wins: a second failure reported with a shorter
-- cooldown does not bring the retry forward.
UPDATE sessions
SET compression_retry_after = MAX(COALESCE(compression_retry_after, 0), CAST(sqlc.arg(retry_after) AS INTEGER)),
    compression_error = sqlc.arg(error)
WHERE id = sqlc.arg(id);

-- name: SessionCompressionCooldownClear :execrows
-- A compression that worked: no cooldown, no error, no fallback streak.
UPDATE sessions SET compression_retry_after = NULL, compression_error = NULL, compression_fallback_streak = 0
WHERE id = sqlc.arg(id);

-- name: SessionCompressionFellBack :one
-- One more compression in a row fell back; the streak after it.
UPDATE sessions SET compression_fallback_streak = compression_fallback_streak + 1
WHERE id = sqlc.arg(id)
RETURNING compression_fallback_streak;

-- name: SessionCompressionStreakReset :exec
UPDATE sessions SET compression_fallback_streak = 0 WHERE id = sqlc.arg(id);

-- name: SessionCwdsOfUser :many
-- The distinct working directories of a user's sessions, the most
-- recently started first.
SELECT cwd FROM sessions
WHERE COALESCE(user_id, '') = sqlc.arg(user_id) AND cwd IS NOT NULL AND cwd <> ''
GROUP BY cwd ORDER BY MAX(started_at) DESC, cwd
LIMIT sqlc.arg(max_rows);

-- name: SessionCwdsWithoutRepoRoot :many
-- The working directories of sessions that have no repository root yet,
-- in order from a cursor, a page at a time.
SELECT DISTINCT cwd FROM sessions
WHERE git_repo_root IS NULL AND cwd IS NOT NULL AND cwd > sqlc.arg(after_cwd)
ORDER BY cwd LIMIT sqlc.arg(max_rows);

-- name: SessionRepoRootFill :execrows
-- Gives every session in cwd that has no repository root this one; a
-- root already set is never changed.
UPDATE sessions SET git_repo_root = sqlc.arg(git_repo_root)
WHERE cwd = sqlc.arg(cwd) AND git_repo_root IS NULL;
