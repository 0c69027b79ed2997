package db

// stmtcache.go keeps the writer's prepared statements.
//
// database/sql prepares, runs and finalizes a statement on every
// ExecContext or QueryContext; for an INSERT into messages that also
// compiles its triggers, and it was a tenth of an append's CPU (a sixth of a
// group commit's). The writer runs the same few dozen sqlc queries all day on
// one connection, so each is prepared once and kept. SQLite re-prepares a
// kept statement by itself after a schema change.

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sessiondb/sessiondb/db/gen"
)

// stmtCacheSize bounds the statements kept: sqlc's queries and the write
// path's own are far fewer, so a query text built at run time cannot grow
// the cache without bound — past the bound, statements run uncached.
const stmtCacheSize = 256

// stmtCache is a gen.DBTX on one connection that prepares each query text
// of ExecContext and QueryRowContext once. A text that does not prepare as
// one statement (several statements, an error) runs uncached, so the
// connection reports its own error.
type stmtCache struct {
	conn *sql.Conn

	mu sync.Mutex
	// +checklocks:mu
	stmts map[string]*sql.Stmt
	// +checklocks:mu
	last string // the text of the statement run last, for diagnostics

	// panicked is set once a statement panicked inside database/sql (see
	// notePanic): the connection can then never be closed through it.
	panicked atomic.Bool
}

// notePanic, deferred around every call into database/sql, records a
// panic raised inside it and lets it go on. The driver panics on
// SQLITE_NOMEM (go-sqlite3's errorFor), and database/sql's Stmt.ExecContext
// and QueryRowContext release the connection only on return, so after
// such a panic the sql.Conn holds its close lock for good and Conn.Close
// waits forever (issue 38: the CLI hung after a 100 MB append). The writer
// halts and closes the driver connection itself (writer.close).
func (c *stmtCache) notePanic() {
	if p := recover(); p != nil {
		c.panicked.Store(true)
		panic(p)
	}
}

// driverPanicked reports whether p, a write callback's panic, was the
// driver's: raised inside database/sql through this cache, or a
// go-sqlite3 error raised while rows were read (Row.Scan steps the
// statement outside the cache's calls). It marks the cache.
func (c *stmtCache) driverPanicked(p any) bool {
	if e, ok := p.(error); ok && strings.HasPrefix(e.Error(), "sqlite3: ") {
		c.panicked.Store(true)
	}
	return c.panicked.Load()
}

var _ gen.DBTX = (*stmtCache)(nil)

func newStmtCache(conn *sql.Conn) *stmtCache {
	return &stmtCache{conn: conn, stmts: make(map[string]*sql.Stmt)}
}

// stmt returns the kept statement for query, preparing it the first time;
// nil means run query uncached.
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = query
	if st, ok := c.stmts[query]; ok {
		return st
	}
	if len(c.stmts) >= stmtCacheSize {
		return nil
	}
	st, err := c.conn.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.stmts[query] = st
	return st
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	defer c.notePanic()
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.conn.ExecContext(ctx, query, args...)
}

// QueryContext runs uncached: its rows stay open while the caller
// iterates, and a kept statement would be rebound under them if the caller
// ran the same text inside its loop. A QueryRowContext row is scanned (and
// closed) at once by every caller — sqlc's code and ours — so it can share
// one.
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	defer c.notePanic()
	c.mu.Lock()
	c.last = query
	c.mu.Unlock()
	return c.conn.QueryContext(ctx, query, args...)
}

// lastStatement is the text of the statement run last through the cache.
func (c *stmtCache) lastStatement() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	defer c.notePanic()
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.conn.QueryRowContext(ctx, query, args...)
}

// PrepareContext hands out a statement of the caller's own, uncached: the
// caller closes it.
func (c *stmtCache) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	defer c.notePanic()
	c.mu.Lock()
	c.last = query
	c.mu.Unlock()
	return c.conn.PrepareContext(ctx, query)
}

// close finalizes every kept statement; the connection closes after.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}
