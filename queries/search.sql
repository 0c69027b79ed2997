-- Full-text search (db/search.go). Every page query returns the same
-- columns, with the same filters, so db/search.go treats their rows alike:
-- rewound messages and hidden sessions are never returned; compacted
-- messages are. Optional filters are NULL for "any"; roles and
-- exclude_sources are JSON arrays (of role names, of sources). (ASCII only in this file: sqlc edits queries by offset
-- and a multi-byte character before a query shifts its edits.)
--
-- Newest and oldest order by message id, which is insertion (and time)
-- order: the index yields matches in that order and SQLite stops after one
-- page. Relevance ranks a window: the newest window_size matches that are
-- returned at all (visible, through every filter), scored (bm25 over words,
-- sessiondb_trigram_score over substrings) while they are walked newest
-- first, then sorted best first, ties newest first.
-- Scoring costs microseconds a match, so the window bounds the work;
-- db/search.go continues past it with the newest-first order (see
-- SortRelevance), which is why the window is counted over exactly the rows
-- the newest-first query returns.
--
-- requeued (a JSON array of ids) names the queued rows an index still
-- holds, with the text they had before an edit: the tail answers for them
-- (db/search_tail.go), so the index must not.
--
-- A ranked window with a filter checks it, the hidden sessions and the
-- state in messages_search_filter (migration 24), not in each match's
-- messages row (a descent into the largest table): the word window reads
-- no messages row at all (MessageSearchWordsRank), the trigram window the
-- text of the candidates that pass (MessageSearchTrigramRankFiltered).
-- With no filter and no hidden session the word window checks nothing but
-- the rewound and the deleted (MessageSearchWordsRankUnfiltered). Without
-- a filter the trigram window reads each candidate's row, whose text it
-- needs anyway (MessageSearchTrigramRank); state lies after content,
-- tool_calls_json and reasoning, so on a message of kilobytes SQLite
-- would walk its overflow pages to reach it (a 40 KB message, ten pages),
-- and a large row's state is checked in messages_session_state instead
-- (one index seek). octet_length reads only the record header, and both
-- branches test the same thing: the threshold only picks the cheaper path.
--
-- Every index query reads the index only between lo_id and hi_id (a
-- bound on f.rowid, which FTS5 applies as it walks): the span of ids a
-- search's matches can lie in (SearchSessionSpan, SearchSourceSpan):
-- with a session given, that session's first and last ids, so its
-- matches are found among its own span, not among every match in the
-- store; with a source of few sessions, theirs; else every id. The bound
-- is a plain term, not an OR, so that FTS5 sees it.

-- name: MessageSearchWordsRank :many
-- The word index (unicode61: content, tool name and tool text): the window (the newest
-- window_size visible matches through the filters), best match first (sessiondb_rank:
-- bm25 with the document frequencies doc_freqs, db/search_rank.go), then newest.
-- A match is checked in messages_search_filter (migration 24: its id, session, role and
-- state, a hundred to a page), not in its messages row; its session against the hidden
-- ones and the source's as sets, each built once a search. The word index is read
-- only within the search's span of ids (lo_id, hi_id: see above).
WITH w AS (
  SELECT c.id, CAST(sessiondb_rank(messages_fts, CAST(sqlc.arg(doc_freqs) AS TEXT)) AS REAL) AS score
  FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
  JOIN messages c INDEXED BY messages_search_filter ON c.id = f.rowid
  WHERE c.session_id NOT IN (SELECT id FROM sessions WHERE hidden = 1)
    AND c.state <> 'rewound'
    AND (CAST(sqlc.narg(source) AS TEXT) IS NULL
         OR c.session_id IN (SELECT s.id FROM sessions s WHERE s.source = sqlc.narg(source)))
    AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
         OR c.session_id NOT IN (SELECT s.id FROM sessions s
                                 WHERE s.source IN (SELECT value FROM json_each(sqlc.narg(exclude_sources)))))
    AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR c.session_id = sqlc.narg(session_id))
    AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
    AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR c.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
    AND c.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
  ORDER BY f.rowid DESC
  LIMIT sqlc.arg(window_size)
)
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM (SELECT id, score FROM w ORDER BY score, id DESC
      LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset)) p
JOIN messages m ON m.id = p.id
JOIN sessions s ON s.id = m.session_id
ORDER BY p.score, p.id DESC;

-- name: MessageSearchWordsRankUnfiltered :many
-- MessageSearchWordsRank for a search with no filter in a store with no
-- hidden session (the caller checks both, SearchAnyHidden): the window is
-- the same rows, found without reading each match's messages row. A match
-- is left out when it is rewound (the partial index messages_rewound,
-- migration 16), when its old text waits in fts_deleted (the row was
-- deleted, so it is not returned at all, or edited, so the tail answers
-- for it), or when it is requeued. The same rows as MessageSearchWordsRank
-- where the queue's rules hold: every indexed id whose message is gone
-- waits in fts_deleted, and every message has its session. In a damaged
-- file (a stray index entry, a message whose session row is missing,
-- possible only with foreign keys off) the two windows can count such a
-- row differently; Verify reports both kinds of damage.
WITH w AS (
  SELECT CAST(f.rowid AS INTEGER) AS id, CAST(sessiondb_rank(messages_fts, CAST(sqlc.arg(doc_freqs) AS TEXT)) AS REAL) AS score
  FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
  WHERE NOT EXISTS (SELECT 1 FROM messages r INDEXED BY messages_rewound
                    WHERE r.id = f.rowid AND r.state = 'rewound')
    AND NOT EXISTS (SELECT 1 FROM fts_deleted d WHERE d.id = f.rowid)
    AND f.rowid NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
  ORDER BY f.rowid DESC
  LIMIT sqlc.arg(window_size)
)
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM (SELECT id, score FROM w ORDER BY score, id DESC
      LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset)) p
JOIN messages m ON m.id = p.id
JOIN sessions s ON s.id = m.session_id
ORDER BY p.score, p.id DESC;

-- name: SearchSessionSpan :one
-- The first and last message ids of a session (messages_session_id, two
-- seeks), the span a search in it reads; 1 and 0 (no id) when it has no
-- message.
SELECT CAST(COALESCE((SELECT MIN(a.id) FROM messages a WHERE a.session_id = sqlc.arg(session_id)), 1) AS INTEGER) AS lo_id,
       CAST(COALESCE((SELECT MAX(b.id) FROM messages b WHERE b.session_id = sqlc.arg(session_id)), 0) AS INTEGER) AS hi_id;

-- name: SearchSourceSpan :one
-- The first and last message ids of a source's sessions when it has at
-- most max_sessions of them (two seeks a session), the span a search by
-- that source reads; 1 and 0 when they hold no message; 0 and the
-- largest id (every id) when the source has more sessions, whose span
-- would cost more to find than it saves (counted up to one past the
-- limit).
WITH many AS (
  SELECT COUNT(*) > CAST(sqlc.arg(max_sessions) AS INTEGER) AS too_many
  FROM (SELECT 1 FROM sessions c WHERE c.source = sqlc.arg(source) LIMIT CAST(sqlc.arg(max_sessions) AS INTEGER) + 1)
)
SELECT CAST(CASE WHEN many.too_many THEN 0
                 ELSE COALESCE((SELECT MIN((SELECT MIN(x.id) FROM messages x WHERE x.session_id = s.id)) FROM sessions s WHERE s.source = sqlc.arg(source)), 1) END AS INTEGER) AS lo_id,
       CAST(CASE WHEN many.too_many THEN 9223372036854775807
                 ELSE COALESCE((SELECT MAX((SELECT MAX(y.id) FROM messages y WHERE y.session_id = t.id)) FROM sessions t WHERE t.source = sqlc.arg(source)), 0) END AS INTEGER) AS hi_id
FROM many;

-- name: SearchAnyHidden :one
-- Whether any session is hidden (the partial index sessions_hidden): a
-- relevance search by words without filters then checks each match's
-- session (MessageSearchWordsRank), else it need not
-- (MessageSearchWordsRankUnfiltered).
SELECT EXISTS (SELECT 1 FROM sessions WHERE hidden = 1) AS any_hidden;

-- name: MessageSearchWordsNewest :many
-- The word index (unicode61: content, tool name and tool text). Newest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
       OR s.source NOT IN (SELECT value FROM json_each(sqlc.narg(exclude_sources))))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND m.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
ORDER BY f.rowid DESC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchWordsOldest :many
-- The word index (unicode61: content, tool name and tool text). Oldest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
       OR s.source NOT IN (SELECT value FROM json_each(sqlc.narg(exclude_sources))))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND m.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
ORDER BY f.rowid ASC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTrigramRank :many
-- The trigram index (substrings of content and tool text, for unsegmented scripts and
-- word-index misses): it finds the messages holding every trigram of the long terms,
-- sessiondb_trigram_match keeps those holding the terms themselves (the index has no
-- positions, migration 13: every candidate's text is read, overflow pages and all);
-- terms shorter than a trigram are checked with instr (each in the content or the
-- tool text).
-- The window (the newest window_size visible matches through the filters and
-- the short terms), best score (sessiondb_trigram_score, against the window's average
-- length) first, then newest.
WITH w AS (
  SELECT m.id, sessiondb_trigram_length(m.content, m.tool_text) AS len
  FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
  JOIN messages m ON m.id = f.rowid
  WHERE m.session_id NOT IN (SELECT id FROM sessions WHERE hidden = 1)
    AND CASE WHEN octet_length(m.content) + COALESCE(octet_length(m.tool_calls_json), 0)
                  + COALESCE(octet_length(m.reasoning), 0) < 2048
             THEN m.state <> 'rewound'
             ELSE NOT EXISTS (SELECT 1 FROM messages x INDEXED BY messages_session_state
                              WHERE x.session_id = m.session_id AND x.state = 'rewound' AND x.id = m.id)
        END
    AND (CAST(sqlc.narg(source) AS TEXT) IS NULL
         OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id AND s.source = sqlc.narg(source)))
    AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
         OR NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id
                        AND s.source IN (SELECT value FROM json_each(sqlc.narg(exclude_sources)))))
    AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
    AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
    AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
    AND m.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
    AND sessiondb_trigram_match(m.content, m.tool_text, CAST(sqlc.arg(long) AS TEXT))
    AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                    WHERE instr(lower(m.content), lower(t.value)) = 0
                      AND instr(lower(COALESCE(m.tool_text, '')), lower(t.value)) = 0)
  ORDER BY f.rowid DESC
  LIMIT sqlc.arg(window_size)
),
scored AS (
  SELECT w.id, CAST(sessiondb_trigram_score(m.content, m.tool_text, CAST(sqlc.arg(long) AS TEXT),
                                            (SELECT AVG(len) FROM w)) AS REAL) AS score
  FROM w JOIN messages m ON m.id = w.id
)
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM (SELECT id, score FROM scored ORDER BY score DESC, id DESC
      LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset)) p
JOIN messages m ON m.id = p.id
JOIN sessions s ON s.id = m.session_id
ORDER BY p.score DESC, p.id DESC;

-- name: MessageSearchTrigramRankFiltered :many
-- MessageSearchTrigramRank for a search with a filter: the same rows, the filters
-- checked in messages_search_filter (c) before a candidate's text is read (m). CROSS
-- JOIN keeps that order, so a candidate outside the filters costs an index seek, not
-- its text (a substring by source at 1M: 65 -> 28 ms); without a filter that seek is
-- a cost of its own (CJK at 1M: 20 -> 28 ms), hence two queries.
WITH w AS (
  SELECT m.id, sessiondb_trigram_length(m.content, m.tool_text) AS len
  FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
  CROSS JOIN messages c INDEXED BY messages_search_filter ON c.id = f.rowid
  CROSS JOIN messages m ON m.id = f.rowid
  WHERE c.session_id NOT IN (SELECT id FROM sessions WHERE hidden = 1)
    AND c.state <> 'rewound'
    AND (CAST(sqlc.narg(source) AS TEXT) IS NULL
         OR c.session_id IN (SELECT s.id FROM sessions s WHERE s.source = sqlc.narg(source)))
    AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
         OR c.session_id NOT IN (SELECT s.id FROM sessions s
                                 WHERE s.source IN (SELECT value FROM json_each(sqlc.narg(exclude_sources)))))
    AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR c.session_id = sqlc.narg(session_id))
    AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
    AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR c.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
    AND c.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
    AND sessiondb_trigram_match(m.content, m.tool_text, CAST(sqlc.arg(long) AS TEXT))
    AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                    WHERE instr(lower(m.content), lower(t.value)) = 0
                      AND instr(lower(COALESCE(m.tool_text, '')), lower(t.value)) = 0)
  ORDER BY f.rowid DESC
  LIMIT sqlc.arg(window_size)
),
scored AS (
  SELECT w.id, CAST(sessiondb_trigram_score(m.content, m.tool_text, CAST(sqlc.arg(long) AS TEXT),
                                            (SELECT AVG(len) FROM w)) AS REAL) AS score
  FROM w JOIN messages m ON m.id = w.id
)
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM (SELECT id, score FROM scored ORDER BY score DESC, id DESC
      LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset)) p
JOIN messages m ON m.id = p.id
JOIN sessions s ON s.id = m.session_id
ORDER BY p.score DESC, p.id DESC;

-- name: MessageSearchTrigramNewest :many
-- The trigram index (substrings of content and tool text, for unsegmented scripts and
-- word-index misses): it finds the messages holding every trigram of the long terms,
-- sessiondb_trigram_match keeps those holding the terms themselves (the index has no
-- positions, migration 13); terms shorter than a trigram are checked with instr
-- (each in the content or the tool text).
-- Newest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
       OR s.source NOT IN (SELECT value FROM json_each(sqlc.narg(exclude_sources))))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND m.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
  AND sessiondb_trigram_match(m.content, m.tool_text, CAST(sqlc.arg(long) AS TEXT))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_text, '')), lower(t.value)) = 0)
ORDER BY f.rowid DESC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTrigramOldest :many
-- The trigram index (substrings of content and tool text, for unsegmented scripts and
-- word-index misses): it finds the messages holding every trigram of the long terms,
-- sessiondb_trigram_match keeps those holding the terms themselves (the index has no
-- positions, migration 13); terms shorter than a trigram are checked with instr
-- (each in the content or the tool text).
-- Oldest first.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages_fts_trigram(CAST(sqlc.arg(query) AS TEXT)) f
JOIN messages m ON m.id = f.rowid
JOIN sessions s ON s.id = m.session_id
WHERE m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
       OR s.source NOT IN (SELECT value FROM json_each(sqlc.narg(exclude_sources))))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND f.rowid BETWEEN CAST(sqlc.arg(lo_id) AS INTEGER) AND CAST(sqlc.arg(hi_id) AS INTEGER)
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND m.id NOT IN (SELECT value FROM json_each(CAST(sqlc.arg(requeued) AS TEXT)))
  AND sessiondb_trigram_match(m.content, m.tool_text, CAST(sqlc.arg(long) AS TEXT))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_text, '')), lower(t.value)) = 0)
ORDER BY f.rowid ASC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchScanNewest :many
-- Without the index (marked stale or damaged): every term a substring of the
-- content, the tool name or the tool text (ASCII case folded). Newest first, among the ids
-- in (after_id, before_id): the scan reads the table a window at a time.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages m
JOIN sessions s ON s.id = m.session_id
WHERE m.id > sqlc.arg(after_id) AND m.id < sqlc.arg(before_id)
  AND m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
       OR s.source NOT IN (SELECT value FROM json_each(sqlc.narg(exclude_sources))))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_name, '')), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_text, '')), lower(t.value)) = 0)
ORDER BY m.id DESC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchScanOldest :many
-- Without the index (marked stale or damaged): every term a substring of the
-- content, the tool name or the tool text (ASCII case folded). Oldest first, among the ids
-- in (after_id, before_id): the scan reads the table a window at a time.
SELECT m.id, m.session_id, m.role, m.tool_name, m.created_at, s.source, s.model, s.started_at
FROM messages m
JOIN sessions s ON s.id = m.session_id
WHERE m.id > sqlc.arg(after_id) AND m.id < sqlc.arg(before_id)
  AND m.state <> 'rewound' AND s.hidden = 0
  AND (CAST(sqlc.narg(source) AS TEXT) IS NULL OR s.source = sqlc.narg(source))
  AND (CAST(sqlc.narg(exclude_sources) AS TEXT) IS NULL
       OR s.source NOT IN (SELECT value FROM json_each(sqlc.narg(exclude_sources))))
  AND (CAST(sqlc.narg(session_id) AS TEXT) IS NULL OR m.session_id = sqlc.narg(session_id))
  AND (CAST(sqlc.narg(roles) AS TEXT) IS NULL OR m.role IN (SELECT value FROM json_each(sqlc.narg(roles))))
  AND NOT EXISTS (SELECT 1 FROM json_each(CAST(sqlc.arg(terms) AS TEXT)) t
                  WHERE instr(lower(m.content), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_name, '')), lower(t.value)) = 0
                    AND instr(lower(COALESCE(m.tool_text, '')), lower(t.value)) = 0)
ORDER BY m.id ASC
LIMIT sqlc.arg(row_limit) OFFSET sqlc.arg(row_offset);

-- name: MessageSearchTexts :many
-- Content, tool name and tool text of one page of hits (ids: a JSON
-- array), for snippets built in Go.
SELECT id, content, CAST(COALESCE(tool_name, '') AS TEXT) AS tool_name,
       CAST(COALESCE(tool_text, '') AS TEXT) AS tool_text
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

-- name: MessageMaxID :one
-- The newest message id: where a scan's windows start or end.
SELECT CAST(COALESCE(MAX(id), 0) AS INTEGER) FROM messages;
