package pg

// deferred.go saves a batch a round trip: its appends' counter updates
// ride the round of the COMMIT. An append's last statement is its
// session's counter UPDATE (store's insertMessages), whose answer only
// says whether the session counted: 0 rows for a session compression
// closed (or a missing one), which the append then refuses. On a pipeline
// the UPDATE is answered at once, "counted", and held (pipeline.deferCount);
// sent in the COMMIT's round as SessionAddMessageCountsAll, which fails —
// so the COMMIT behind it never runs — when a session counted nothing.
// The batch then runs again careful, each append in a savepoint reading
// its own count, and the refused one is answered its error alone. An
// append that goes on after its count (none of the store's does) sends it
// in its next round, checked there (checkDeferred).
//
// Nothing a caller sees changes: the callers are answered after the
// COMMIT, and a COMMIT only follows the counts that all counted.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sessiondb/sessiondb/internal/rules"
	"github.com/sessiondb/sessiondb/pg/internal/pggen"
	"github.com/sessiondb/sessiondb/store/driver"
)

// deferCount holds s, a lane's counter UPDATE, when the pipeline defers
// counts and the session's id JSON carries (SessionAddMessageCountsAll
// reads it from JSON).
func (p *pipeline) deferCount(s *pipeStmt) bool {
	if !p.deferCounts || !rules.JSONExact(s.counts.ID) {
		return false
	}
	s.done, s.deferred = make(chan struct{}), true
	p.mu.Lock()
	p.deferred = append(p.deferred, s)
	p.mu.Unlock()
	return true
}

// checkDeferred notes a deferred count that a round carried and that did
// not count: its append went on as if it had, so the batch must run again.
func (p *pipeline) checkDeferred(round []*pipeStmt) {
	for _, s := range round {
		if s.deferred && (s.err != nil || s.tag.RowsAffected() != 1) {
			p.miscounted = true
		}
	}
}

// countsAll is the deferred counts left at the end of the lanes, as the
// statement that rides the COMMIT's round, or "" when there are none.
func (p *pipeline) countsAll() (sql string, args []any) {
	p.mu.Lock()
	deferred := p.deferred
	p.mu.Unlock()
	if len(deferred) == 0 {
		return "", nil
	}
	rows := countRows(p, deferred)
	doc, _ := json.Marshal(rows) // strings JSON carries, and integers: cannot fail
	return recorded(func(db pggen.DBTX) error {
		return queries.SessionAddMessageCountsAll(p.ctx, db, string(doc))
	})
}

// commitWithCounts is the COMMIT's round of a batch whose counts were
// deferred: the counts (failing unless every session counted), the
// COMMIT, and the batch's NOTIFY in a transaction of its own that does
// not wait for its flush (commitAndNotify says why). One pgx.Batch: an
// error skips every statement after it, the COMMIT too.
func (a *appender) commitWithCounts(sql string, args []any) *pgx.Batch {
	var b pgx.Batch
	b.Queue(sql, args...)
	b.Queue("COMMIT")
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	b.Queue(a.eng.notify)
	b.Queue("COMMIT")
	return &b
}

// commitCounted is commit's round when the batch's counts were deferred.
// A counts statement the server refused (a session counted nothing, or
// the server's own reason) skipped the COMMIT: the transaction is rolled
// back and the batch runs again — careful, or as it was when a rerun may
// cure it. One the server ended the connection at (FATAL) skipped it
// too: nothing committed, the batch runs again on another connection.
// Any other failure to read the counts' answer leaves the COMMIT's
// outcome unknown (ErrCommitUnknown), as at the COMMIT itself.
func (a *appender) commitCounted(ctx context.Context, c *pgx.Conn, ok []*appendRequest, careful bool, counts outgoing, commitStart time.Time) (replay []*appendRequest, err error, undone bool) {
	res := c.SendBatch(ctx, a.commitWithCounts(counts.sql, counts.args))
	if _, err := res.Exec(); err != nil {
		_ = res.Close()
		var pgErr *pgconn.PgError
		switch {
		case !errors.As(err, &pgErr):
			finishAppends(ok, appendResult{err: fmt.Errorf("%w: %w", driver.ErrCommitUnknown, err)})
			return nil, nil, false
		case pgErr.Severity != "ERROR":
			rollbackConn(c)
			return ok, &lostBeforeCommit{err}, false
		}
		rollbackConn(c)
		if wholeTransaction(err) || careful {
			return ok, err, false
		}
		return ok, nil, true
	}
	tag, err := res.Exec()
	return a.committed(ok, careful, tag, err, res.Close, commitStart)
}
