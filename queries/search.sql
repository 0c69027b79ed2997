-- Full-text search (db/search.go). Every page query returns the same
-- columns, with the same filters, so db/search.go treats their rows alike:
-- rewound messages and hidden sessions are never returned; compacted
-- messages are. Optional filters are NULL for "any"; roles is a JSON array
-- of role names. (ASCII only in this file: sqlc edits queries by offset
-- and a multi-byte character before a query shifts its edits.)
--
-- Newest and oldest order by message id, which is insertion (and time)
-- order: the index yields matches in that order and SQLite stops after one
-- page. Relevance orders by f.rank (bm25, sorted inside FTS5, so only the
-- rows of the page are joined) over the matches with id >= min_id: scoring
-- costs about 2 microseconds a match, so without filters db/search.go
-- ranks only the newest few thousand (min_id, from the Window queries).

-- name: MessageSearchWordsRank :many
-- The word index (unicode61, content and tool name). Best match first (bm25), then newest.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND f.rowid >= CAST(sqlc.arg(min_id) AS INTEGER)
ORDER BY f.rank
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchWordsWindow :one
-- The id of the (row_offset+1)-th newest match, before any filter: where
-- relevance ranking starts (see db/search.go, rankWindow).
SELECT CAST(f.rowid AS INTEGER) AS id
FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
ORDER BY f.rowid DESC
LIMIT 1 OFFSET sqlc.arg(row_offset);

-- name: MessageSearchWordsNewest :many
-- The word index (unicode61, content and tool name). Newest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
ORDER BY f.rowid DESC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchWordsOldest :many
-- The word index (unicode61, content and tool name). Oldest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
ORDER BY f.rowid ASC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTrigramRank :many
-- The trigram index (substrings of content, for unsegmented scripts and
-- word-index misses); terms shorter than a trigram are checked with instr.
-- Best match first (bm25), then newest.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0)
  AND f.rowid >= CAST(sqlc.arg(min_id) AS INTEGER)
ORDER BY f.rank
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTrigramWindow :one
-- The id of the (row_offset+1)-th newest match, before any filter: where
-- relevance ranking starts (see db/search.go, rankWindow).
SELECT CAST(f.rowid AS INTEGER) AS id
FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
ORDER BY f.rowid DESC
LIMIT 1 OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTrigramNewest :many
-- The trigram index (substrings of content, for unsegmented scripts and
-- word-index misses); terms shorter than a trigram are checked with instr.
-- Newest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0)
ORDER BY f.rowid DESC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTrigramOldest :many
-- The trigram index (substrings of content, for unsegmented scripts and
-- word-index misses); terms shorter than a trigram are checked with instr.
-- Oldest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0)
ORDER BY f.rowid ASC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchScanNewest :many
-- Without the index (marked stale or damaged): every term a substring of the
-- content or the tool name (ASCII case folded). Newest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages m
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_name, '')), lower(t.value)) = 0)
ORDER BY m.id DESC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchScanOldest :many
-- Without the index (marked stale or damaged): every term a substring of the
-- content or the tool name (ASCII case folded). Oldest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages m
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_name, '')), lower(t.value)) = 0)
ORDER BY m.id ASC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchHighlight :many
-- The matches of the word index in content and tool name, between char(2) and
-- char(3), for the snippets of one page of hits (ids: a JSON array). The
-- CROSS JOINs keep SQLite from walking every match: the ids drive.
SELECT m.id,
       CAST(COALESCE(highlight(messages_fts, 0, char(2), char(3)), '') AS TEXT) AS content,
       CAST(COALESCE(highlight(messages_fts, 1, char(2), char(3)), '') AS TEXT) AS tool_name
FROM json_each(CAST(sqlc.arg(ids) AS TEXT)) j
CROSS JOIN messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
CROSS JOIN messages m
WHERE f.rowid = j.value AND m.id = f.rowid;

-- name: MessageSearchTexts :many
-- Content and tool name of one page of hits (ids: a JSON array), for
-- snippets built in Go.
SELECT id, content, CAST(COALESCE(tool_name, '') AS TEXT) AS tool_name
FROM messages
WHERE id IN (SELECT value FROM json_each(CAST(sqlc.arg(ids) AS TEXT)));

-- name: MessageContextBefore :many
-- Up to row_limit live (active or compacted) messages before id in its
-- session, nearest first, content cut to max_chars characters.
SELECT id, role, CAST(substr(content, 1, sqlc.arg(max_chars)) AS TEXT) AS content
FROM messages
WHERE session_id = sqlc.arg(session_id) AND id < sqlc.arg(id) AND state <> 'rewound'
ORDER BY id DESC
LIMIT sqlc.arg(row_limit);

-- name: MessageContextAfter :many
-- Up to row_limit live messages after id in its session, nearest first.
SELECT id, role, CAST(substr(content, 1, sqlc.arg(max_chars)) AS TEXT) AS content
FROM messages
WHERE session_id = sqlc.arg(session_id) AND id > sqlc.arg(id) AND state <> 'rewound'
ORDER BY id ASC
LIMIT sqlc.arg(row_limit);
