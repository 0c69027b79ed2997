-- Resolving what a person names: an id prefix, the session to resume.

-- name: SessionIDsInRange :many
-- Session ids in [lo, hi): the ids that start with a prefix, when hi is
-- the prefix with its last code point raised by one (ids compare
-- bytewise, and UTF-8's byte order is code point order). The
-- primary key serves the range; the caller asks for one more than it
-- lists, to know whether there are more.
SELECT id FROM sessions WHERE id >= sqlc.arg(lo) AND id < sqlc.arg(hi) ORDER BY id LIMIT sqlc.arg(max_rows);

-- name: SessionHasRealTurns :one
-- Whether a session holds a turn of its own: a visible message that is
-- not a compression summary (a continuation that holds only its summary
-- has none yet), nor a system prompt, nor a note (nobody's turn).
SELECT EXISTS (
    SELECT 1 FROM messages
    WHERE session_id = sqlc.arg(session_id) AND is_summary = 0 AND state = 'active' AND role <> 'system' AND role <> 'note'
);

-- name: SessionIDsContaining :many
-- Sessions whose id holds needle anywhere, taken literally (instr, not
-- LIKE: no character of the needle is a pattern), newest start first.
SELECT id FROM sessions WHERE instr(id, sqlc.arg(needle)) > 0
ORDER BY started_at DESC, id DESC LIMIT sqlc.arg(max_rows);
