package db

// readstmts.go keeps the read pool's prepared statements.
//
// database/sql prepares, runs and finalizes a statement on every query the
// driver runs through a *sql.Tx or *sql.DB; for a search that compiling
// (the FTS5 query, the joins, the window) was a tenth of its CPU. The
// readers run the same sqlc queries all day, so each text is kept as a
// *sql.Stmt of the pool: database/sql prepares it once on each connection
// that runs it and reuses it there, inside a snapshot's transaction too
// (Tx.StmtContext).
//
// A text is prepared for keeping after the read that first ran it, when
// that read holds no connection: preparing on the pool takes a connection,
// and a read that waited for one while holding the last of them would wait
// forever. SQLite re-prepares a kept statement by itself after a schema
// change.

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/ncruces/go-sqlite3"

	"github.com/sessiondb/sessiondb/db/gen"
)

// readStmts is the pool's kept statements, shared by every read.
type readStmts struct {
	db *sql.DB

	mu sync.Mutex
	// stmts holds the kept statements; a nil entry marks a text that
	// does not prepare on its own (several statements, an error) and so
	// always runs uncached.
	// +checklocks:mu
	stmts map[string]*sql.Stmt
	// wanted are the texts run uncached since the last prepareWanted.
	// +checklocks:mu
	wanted map[string]struct{}
	// +checklocks:mu
	closed bool
	// runs counts the statements run kept (tests: that keeping is used).
	runs atomic.Uint64
}

func newReadStmts(db *sql.DB) *readStmts {
	return &readStmts{db: db, stmts: make(map[string]*sql.Stmt), wanted: make(map[string]struct{})}
}

// kept returns the kept statement for query, or nil (run it uncached),
// noting a text not seen before for prepareWanted. The bound is
// stmtCacheSize, as for the writer's statements.
func (c *readStmts) kept(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, seen := c.stmts[query]
	if !seen && !c.closed && len(c.stmts)+len(c.wanted) < stmtCacheSize {
		c.wanted[query] = struct{}{}
	}
	return st
}

// prepareWanted prepares the texts noted since it last ran, whichever
// read noted them (each text once a process, most of them in the first
// reads after Open). The caller holds no connection of the pool.
func (c *readStmts) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	if len(c.wanted) == 0 {
		c.mu.Unlock()
		return
	}
	texts := make([]string, 0, len(c.wanted))
	for q := range c.wanted {
		texts = append(texts, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range texts {
		if ctx.Err() != nil {
			return // the next read that runs it notes it again
		}
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil && transientPrepareError(ctx, err) {
			continue // the next read that runs q notes it again
		}
		c.mu.Lock()
		if _, seen := c.stmts[q]; seen || c.closed || len(c.stmts) >= stmtCacheSize {
			c.mu.Unlock()
			if st != nil {
				st.Close()
			}
			continue
		}
		c.stmts[q] = st // nil when q does not prepare: it stays uncached
		c.mu.Unlock()
	}
}

// transientPrepareError reports whether a text's failure to prepare may
// pass (the context, a lock, I/O, memory) rather than belong to the text
// (SQLite's ERROR: its syntax, a table it names; or several statements).
func transientPrepareError(ctx context.Context, err error) bool {
	var code sqlite3.ErrorCode // *sqlite3.Error and ExtendedErrorCode convert too
	return ctx.Err() != nil || (errors.As(err, &code) && code != sqlite3.ERROR)
}

// close finalizes the kept statements; the pool closes after.
func (c *readStmts) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for q, st := range c.stmts {
		if st != nil {
			errs = append(errs, st.Close())
		}
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// pool is the gen.DBTX of reads outside a transaction: each statement
// takes a connection of the pool, on which database/sql reuses the kept
// statement or prepares it.
func (c *readStmts) pool() gen.DBTX { return poolQueries{c} }

type poolQueries struct{ c *readStmts }

func (p poolQueries) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.c.db.ExecContext(ctx, query, args...) // reads write nothing: not kept
}

func (p poolQueries) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.c.db.PrepareContext(ctx, query)
}

func (p poolQueries) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.c.kept(query); st != nil {
		p.c.runs.Add(1)
		return st.QueryContext(ctx, args...)
	}
	return p.c.db.QueryContext(ctx, query, args...)
}

func (p poolQueries) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.c.kept(query); st != nil {
		p.c.runs.Add(1)
		return st.QueryRowContext(ctx, args...)
	}
	return p.c.db.QueryRowContext(ctx, query, args...)
}

// in is the gen.DBTX of one snapshot's transaction.
func (c *readStmts) in(tx *sql.Tx) gen.DBTX { return &txQueries{c: c, tx: tx} }

// txQueries runs a snapshot's statements on its transaction's connection,
// the kept ones through Tx.StmtContext. On one connection a kept statement
// is one SQLite statement, so it must not run again while rows it returned
// are still being read (running it would rebind it under them): a text
// whose last rows are still open runs uncached. QueryRowContext's row is
// scanned, and so closed, at once by every caller (sqlc's code and ours),
// as on the writer (stmtcache.go).
type txQueries struct {
	c  *readStmts
	tx *sql.Tx

	mu sync.Mutex
	// +checklocks:mu
	open map[string]*sql.Rows // the rows a kept statement last returned
}

func (t *txQueries) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, query, args...) // reads write nothing: not kept
}

func (t *txQueries) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, query)
}

func (t *txQueries) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st := t.c.kept(query)
	t.mu.Lock()
	defer t.mu.Unlock()
	if st = t.free(st, query); st == nil {
		return t.tx.QueryContext(ctx, query, args...)
	}
	t.c.runs.Add(1)
	rows, err := t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	if t.open == nil {
		t.open = make(map[string]*sql.Rows)
	}
	t.open[query] = rows
	return rows, nil
}

func (t *txQueries) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st := t.c.kept(query)
	t.mu.Lock()
	defer t.mu.Unlock()
	if st = t.free(st, query); st != nil {
		t.c.runs.Add(1)
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// free returns st, query's kept statement, unless rows it returned in
// this transaction are still open (nil: run query uncached).
//
// +checklocks:t.mu
func (t *txQueries) free(st *sql.Stmt, query string) *sql.Stmt {
	if prev := t.open[query]; st != nil && prev != nil {
		if _, err := prev.Columns(); err == nil { // still open
			return nil
		}
	}
	return st
}
