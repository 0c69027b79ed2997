package bench

// The raw-driver baselines: the same work as an append and a session
// read, done with the bare driver. Their connections come from
// db/durable.go (internal/rawconn), but they begin their own transactions,
// which the library never does outside db/tx.go: each such line carries a
// vet-tool exception, and this package is not part of the library.

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sessiondb/sessiondb/internal/rawconn"
)

// openRaw opens a one-connection pool on the database at path, through
// db/durable.go (internal/rawconn): the writer's connection, or a reader's
// (its 16 MiB page cache included) when readOnly. FTS5 is registered:
// Run and the benchmarks create the file with db.Open first.
func openRaw(path string, readOnly bool) (*sql.DB, error) { return rawconn.Open(path, readOnly) }

// openRawLoader opens the raw loader's read connection on path.
func openRawLoader(path string) (*sql.DB, error) { return openRaw(path, true) }

// rawAppender does what AppendMessage does — BEGIN IMMEDIATE, the session
// check, the insert, the counter update, indexing the new row, COMMIT — with the bare driver and every
// statement prepared once: the ceiling the write path is measured against.
type rawAppender struct {
	d             *sql.DB
	c             *sql.Conn
	begin, commit *sql.Stmt
	body          []*sql.Stmt // rawAppendBody, in order
}

// rawAppendBody is the baseline's transaction body, one statement per
// entry; the insert's arguments are the only ones that vary.
var rawAppendBody = []string{
	"SELECT COUNT(*) FROM sessions WHERE id = 'bench'",
	"INSERT INTO messages (session_id, role, content, created_at) VALUES ('bench', ?, ?, ?)",
	"UPDATE sessions SET message_count = message_count + 1 WHERE id = 'bench'",
	// Indexing the new row in the same transaction, as sessiondb did
	// before the background indexer, and moving the index's mark past it
	// (migration 12): the ceiling of a durable append that is indexed at
	// once. The new row is the last message (the baseline is the only
	// writer); last_insert_rowid() is not used: on this driver the later
	// statements read it as 0, and the baseline indexed nothing.
	`INSERT INTO messages_fts (rowid, content, tool_name)
	 SELECT m.id, m.content, m.tool_name FROM messages m WHERE m.id = (SELECT MAX(id) FROM messages)`,
	`INSERT INTO messages_fts_trigram (rowid, content)
	 SELECT m.id, m.content FROM messages m WHERE m.id = (SELECT MAX(id) FROM messages)`,
	"UPDATE fts_mark SET indexed_through = (SELECT MAX(id) FROM messages), behind_since = 0",
}

// newRawAppender opens a bare writer connection on the store at path
// (which must be closed: the baseline is the only writer) and prepares
// the transaction's statements on it.
func newRawAppender(ctx context.Context, path string) (r *rawAppender, err error) {
	r = &rawAppender{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.d, err = openRaw(path, false); err != nil {
		return nil, err
	}
	if r.c, err = r.d.Conn(ctx); err != nil {
		return nil, err
	}
	//sessiondb:allow txonly -- the raw-driver baseline the library's write path is measured against
	if r.begin, err = r.c.PrepareContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	//sessiondb:allow txonly -- the raw-driver baseline the library's write path is measured against
	if r.commit, err = r.c.PrepareContext(ctx, "COMMIT"); err != nil {
		return nil, err
	}
	for _, q := range rawAppendBody {
		st, err := r.c.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		r.body = append(r.body, st)
	}
	return r, nil
}

func (r *rawAppender) append(ctx context.Context, i int) error {
	if _, err := r.begin.ExecContext(ctx); err != nil {
		return err
	}
	m := benchMessage(i)
	for k, st := range r.body {
		var err error
		switch k {
		case 0:
			var n int
			err = st.QueryRowContext(ctx).Scan(&n)
		case 1:
			_, err = st.ExecContext(ctx, string(m.Role), m.Content, time.Now().UnixMilli())
		default:
			_, err = st.ExecContext(ctx)
		}
		if err != nil {
			// The measurement ends here: close, which closes the
			// connection, rolls the transaction back.
			return fmt.Errorf("%s: %w", rawAppendBody[k], err)
		}
	}
	_, err := r.commit.ExecContext(ctx)
	return err
}

func (r *rawAppender) close() {
	for _, st := range append([]*sql.Stmt{r.begin, r.commit}, r.body...) {
		if st != nil {
			st.Close()
		}
	}
	if r.c != nil {
		r.c.Close()
	}
	if r.d != nil {
		r.d.Close()
	}
}

// rawMessage is what a hand-written loader fills.
type rawMessage struct {
	id, summary, created                           int64
	sid, role, content, state                      string
	toolName, toolCallID, calls, reasoning, finish *string
	key                                            *string
	tokens                                         *int64
}

// rawLoad reads limit messages of the bench session with a bare SELECT
// on q (openRawLoader) into a slice: the baseline for Messages.
func rawLoad(ctx context.Context, q *sql.DB, limit int) error {
	rows, err := q.QueryContext(ctx, `SELECT id, session_id, role, content, tool_name, tool_call_id,
		tool_calls_json, reasoning, finish_reason, token_count, state, is_summary, idempotency_key, created_at
		FROM messages WHERE session_id = ? ORDER BY id LIMIT ?`, "bench", limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	var out []rawMessage
	for rows.Next() {
		var m rawMessage
		if err := rows.Scan(&m.id, &m.sid, &m.role, &m.content, &m.toolName, &m.toolCallID, &m.calls,
			&m.reasoning, &m.finish, &m.tokens, &m.state, &m.summary, &m.key, &m.created); err != nil {
			return err
		}
		out = append(out, m)
	}
	if len(out) != limit {
		return fmt.Errorf("raw loader read %d rows, want %d", len(out), limit)
	}
	return rows.Err()
}
