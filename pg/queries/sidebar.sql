-- Session lists for a picker or a sidebar: by last activity (the newest
-- message or heartbeat of the session and its compression ancestors, never
-- before its start: conversation_active_at), newest first, keyset-paged on
-- the session_activity_recent index (migration 14: the activity rounded
-- down to ten seconds, in a table of its own so that an append's update of
-- its session is HOT), each ten seconds' sessions ordered by their exact
-- activity. Every filter is optional (NULL = any).
-- The two queries share their filters and must keep them identical.
-- sources and exclude_sources are JSON arrays of strings, as on SQLite;
-- json_each becomes jsonb_array_elements_text.

-- name: SessionRecent :many
-- One page. after_at/after_id is the last row of the previous page (NULL
-- for the first). pinned selects one phase of a pinned-first list. The
-- preview is the first visible user message, cut here so a huge message
-- never travels whole.
SELECT s.id, s.source, s.user_id, s.model, s.cwd, s.title, s.started_at, s.ended_at, s.end_reason,
       s.message_count, s.archived, s.auto_archived, s.pinned, s.hidden, s.parent_session_id, s.parent_kind,
       s.git_branch, s.git_repo_root, s.delegated_from,
       CAST(COALESCE(s.root_started_at, s.started_at) AS bigint) AS root_started_at,
       CAST(COALESCE(s.conversation_active_at, s.started_at) AS bigint) AS active_at,
       CAST(COALESCE((SELECT substr(m.content, 1, 400) FROM messages m
                      WHERE m.session_id = s.id AND m.role = 'user' AND m.state <> 'rewound' AND m.is_summary = 0
                      ORDER BY m.id LIMIT 1), '') AS TEXT) AS preview
FROM sessions s JOIN session_activity a ON a.session_id = s.id
WHERE (CAST(sqlc.narg(user_id) AS TEXT) IS NULL OR s.user_id = sqlc.narg(user_id))
  AND (CAST(sqlc.narg(sources) AS TEXT) IS NULL OR s.source IN (SELECT jsonb_array_elements_text(CAST(CAST(sqlc.narg(sources) AS text) AS jsonb))))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL OR s.source NOT IN (SELECT jsonb_array_elements_text(CAST(CAST(sqlc.narg(exclude_sources) AS text) AS jsonb))))
  AND (CAST(sqlc.narg(archived) AS bigint) IS NULL OR s.archived = sqlc.narg(archived))
  AND (CAST(sqlc.narg(pinned) AS bigint) IS NULL OR s.pinned = sqlc.narg(pinned))
  AND (CAST(sqlc.arg(include_hidden) AS bigint) = 1 OR s.hidden = 0)
  AND (CAST(sqlc.narg(cwd) AS TEXT) IS NULL OR s.cwd = sqlc.narg(cwd)
       OR substr(s.cwd, 1, length(sqlc.narg(cwd)) + 1) = sqlc.narg(cwd) || '/')
  AND (CAST(sqlc.narg(started_since) AS bigint) IS NULL OR s.started_at >= sqlc.narg(started_since))
  AND (CAST(sqlc.narg(active_since) AS bigint) IS NULL OR (COALESCE(s.conversation_active_at, s.started_at) >= sqlc.narg(active_since)
       AND a.active_bucket >= sqlc.narg(active_since) / 10000))
  AND (CAST(sqlc.arg(include_children) AS bigint) = 1
       OR ((s.parent_kind IS NULL OR s.parent_kind NOT IN ('delegate', 'tool')) AND s.delegated_from IS NULL))
  AND (CAST(sqlc.arg(tips_only) AS bigint) = 0 OR NOT EXISTS (
          SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id AND c.parent_kind = 'compression'))
  AND (CAST(sqlc.narg(after_at) AS bigint) IS NULL OR (a.active_bucket <= sqlc.narg(after_at) / 10000
       AND (COALESCE(s.conversation_active_at, s.started_at) < sqlc.narg(after_at)
            OR (COALESCE(s.conversation_active_at, s.started_at) = sqlc.narg(after_at) AND s.id < sqlc.arg(after_id)))))
ORDER BY a.active_bucket DESC, COALESCE(s.conversation_active_at, s.started_at) DESC, s.id DESC
LIMIT CAST(sqlc.arg(row_limit) AS bigint);

-- name: SessionRecentByStart :many
-- SessionRecent ordered by when each conversation began (a continuation
-- at its compression root's start), newest first, keyset-paged on the
-- sessions_root_started index: after_at/after_id is the last row's
-- root_started_at and id.
SELECT s.id, s.source, s.user_id, s.model, s.cwd, s.title, s.started_at, s.ended_at, s.end_reason,
       s.message_count, s.archived, s.auto_archived, s.pinned, s.hidden, s.parent_session_id, s.parent_kind,
       s.git_branch, s.git_repo_root, s.delegated_from,
       CAST(COALESCE(s.root_started_at, s.started_at) AS bigint) AS root_started_at,
       CAST(COALESCE(s.conversation_active_at, s.started_at) AS bigint) AS active_at,
       CAST(COALESCE((SELECT substr(m.content, 1, 400) FROM messages m
                      WHERE m.session_id = s.id AND m.role = 'user' AND m.state <> 'rewound' AND m.is_summary = 0
                      ORDER BY m.id LIMIT 1), '') AS TEXT) AS preview
FROM sessions s
WHERE (CAST(sqlc.narg(user_id) AS TEXT) IS NULL OR s.user_id = sqlc.narg(user_id))
  AND (CAST(sqlc.narg(sources) AS TEXT) IS NULL OR s.source IN (SELECT jsonb_array_elements_text(CAST(CAST(sqlc.narg(sources) AS text) AS jsonb))))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL OR s.source NOT IN (SELECT jsonb_array_elements_text(CAST(CAST(sqlc.narg(exclude_sources) AS text) AS jsonb))))
  AND (CAST(sqlc.narg(archived) AS bigint) IS NULL OR s.archived = sqlc.narg(archived))
  AND (CAST(sqlc.narg(pinned) AS bigint) IS NULL OR s.pinned = sqlc.narg(pinned))
  AND (CAST(sqlc.arg(include_hidden) AS bigint) = 1 OR s.hidden = 0)
  AND (CAST(sqlc.narg(cwd) AS TEXT) IS NULL OR s.cwd = sqlc.narg(cwd)
       OR substr(s.cwd, 1, length(sqlc.narg(cwd)) + 1) = sqlc.narg(cwd) || '/')
  AND (CAST(sqlc.narg(started_since) AS bigint) IS NULL OR s.started_at >= sqlc.narg(started_since))
  AND (CAST(sqlc.narg(active_since) AS bigint) IS NULL OR COALESCE(s.conversation_active_at, s.started_at) >= sqlc.narg(active_since))
  AND (CAST(sqlc.arg(include_children) AS bigint) = 1
       OR ((s.parent_kind IS NULL OR s.parent_kind NOT IN ('delegate', 'tool')) AND s.delegated_from IS NULL))
  AND (CAST(sqlc.arg(tips_only) AS bigint) = 0 OR NOT EXISTS (
          SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id AND c.parent_kind = 'compression'))
  AND (CAST(sqlc.narg(after_at) AS bigint) IS NULL
       OR COALESCE(s.root_started_at, s.started_at) < sqlc.narg(after_at)
       OR (COALESCE(s.root_started_at, s.started_at) = sqlc.narg(after_at) AND s.id < sqlc.arg(after_id)))
ORDER BY COALESCE(s.root_started_at, s.started_at) DESC, s.id DESC
LIMIT CAST(sqlc.arg(row_limit) AS bigint);

-- name: SessionRecentCounts :many
-- The same filters (without paging), counted per source, user and
-- archived flag; the caller adds them up.
SELECT s.source, CAST(COALESCE(s.user_id, '') AS TEXT) AS user_id, s.archived, COUNT(*) AS sessions
FROM sessions s
WHERE (CAST(sqlc.narg(user_id) AS TEXT) IS NULL OR s.user_id = sqlc.narg(user_id))
  AND (CAST(sqlc.narg(sources) AS TEXT) IS NULL OR s.source IN (SELECT jsonb_array_elements_text(CAST(CAST(sqlc.narg(sources) AS text) AS jsonb))))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL OR s.source NOT IN (SELECT jsonb_array_elements_text(CAST(CAST(sqlc.narg(exclude_sources) AS text) AS jsonb))))
  AND (CAST(sqlc.narg(archived) AS bigint) IS NULL OR s.archived = sqlc.narg(archived))
  AND (CAST(sqlc.narg(pinned) AS bigint) IS NULL OR s.pinned = sqlc.narg(pinned))
  AND (CAST(sqlc.arg(include_hidden) AS bigint) = 1 OR s.hidden = 0)
  AND (CAST(sqlc.narg(cwd) AS TEXT) IS NULL OR s.cwd = sqlc.narg(cwd)
       OR substr(s.cwd, 1, length(sqlc.narg(cwd)) + 1) = sqlc.narg(cwd) || '/')
  AND (CAST(sqlc.narg(started_since) AS bigint) IS NULL OR s.started_at >= sqlc.narg(started_since))
  AND (CAST(sqlc.narg(active_since) AS bigint) IS NULL OR COALESCE(s.conversation_active_at, s.started_at) >= sqlc.narg(active_since))
  AND (CAST(sqlc.arg(include_children) AS bigint) = 1
       OR ((s.parent_kind IS NULL OR s.parent_kind NOT IN ('delegate', 'tool')) AND s.delegated_from IS NULL))
  AND (CAST(sqlc.arg(tips_only) AS bigint) = 0 OR NOT EXISTS (
          SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id AND c.parent_kind = 'compression'))
GROUP BY s.source, COALESCE(s.user_id, ''), s.archived;
