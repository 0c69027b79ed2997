package pg

// tx.go holds every transaction the PostgreSQL engine begins, commits or
// rolls back (lint/txonly allows transaction control here and nowhere
// else in pg/): Write's SERIALIZABLE transactions, the append batches'
// READ COMMITTED ones (appendbatch.go queues and leads them) and
// Snapshot's read-only ones.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/store/driver"
)

// Write runs fn in one SERIALIZABLE transaction within patience, which
// bounds every wait: the pool's connection, the server's locks
// (lock_timeout) and each statement (statement_timeout) get what is left
// of it. A serialization failure or deadlock, which the server reports
// after rolling the transaction back, reruns fn until patience runs out,
// as does a connection lost before COMMIT (lostBeforeCommit).
// A COMMIT that got no answer from the server (the connection lost, the
// context ended) is ErrCommitUnknown and never rerun.
//
// From the third run after serialization failures on, the transaction
// first takes the sessions table in EXCLUSIVE mode, before its snapshot:
// appends commit a new version of their session's row every few
// milliseconds (appendbatch.go), and a write that reads a session and
// then writes its row (a compression child's publish ending its parent)
// would otherwise fail 40001 whenever one committed in between, again
// and again for as long as a conversation is busy. The lock waits for
// the batches in flight and holds new ones back for this one transaction
// (plain reads go on), so its rerun cannot be starved.
func (d pgDriver) Write(ctx context.Context, patience time.Duration, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	if d.readOnly != nil {
		return d.readOnly
	}
	deadline := time.Now().Add(patience)
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var err error
	for attempt := 0; ; attempt++ {
		exclusive := attempt >= 2 && retryable(err)
		if err = d.writeOnce(ctx, pctx, deadline, exclusive, fn); err == nil {
			d.writes.Add(1)
			d.route.wrote.Add(1) // before the caller reads: readroute.go
			d.changes.Changed()
			return nil
		}
		var lost *lostBeforeCommit
		if !retryable(err) && !errors.As(err, &lost) || pctx.Err() != nil || sleep(pctx, backoff(attempt)) != nil {
			break
		}
		d.reruns.Add(1)
	}
	lost, wasLost := err.(*lostBeforeCommit)
	if wasLost {
		err = lost.err
	}
	switch {
	case errors.Is(err, driver.ErrCommitUnknown):
		return err
	case gaveUpWaiting(ctx, pctx, err), (retryable(err) || wasLost) && ctx.Err() == nil && !d.closed.Load():
		// Patience spent on reruns: after serialization failures, or
		// with the server unreachable (restarting) — nothing committed.
		d.lockTimeouts.Add(1)
		return &LockedError{Schema: d.schema, Patience: patience, Err: err}
	case d.closed.Load():
		return driver.ErrClosed
	case ctx.Err() != nil && !driver.HasSentinel(mapError(err)):
		// The caller's own deadline or cancellation ended the call (in a
		// statement, a wait or between reruns): nothing was committed,
		// and the caller is told so in its context's terms, not the
		// server's.
		return fmt.Errorf("%w (nothing was written)", ctx.Err())
	}
	return mapError(err)
}

func (d pgDriver) writeOnce(ctx, pctx context.Context, deadline time.Time, exclusive bool, fn func(context.Context, driver.Executor) error) error {
	conn, err := d.pool.Acquire(pctx)
	if err != nil {
		if pctx.Err() == nil && !d.closed.Load() {
			return &lostBeforeCommit{err} // no connection to the server: nothing began
		}
		return err
	}
	defer conn.Release()
	// The timeouts are the patience left, in whole milliseconds (at least
	// one: zero would mean none). Hand-written: SET LOCAL takes no
	// parameters, and sending it with BEGIN saves a round trip.
	ms := max(time.Until(deadline).Milliseconds(), 1)
	// The store's tables are locked with it, before the guard's snapshot,
	// and the commit's NOTIFY queued (watch.go): the server sends it only
	// if the transaction commits.
	begin := fmt.Sprintf("BEGIN ISOLATION LEVEL SERIALIZABLE; SET LOCAL lock_timeout = %d; SET LOCAL statement_timeout = %d; "+
		"SET LOCAL sessiondb.counts_last_message_at = on; %s; %s", ms, ms, d.guard.lockTables, d.notify) // the trigger's work is done (migration 6)
	if d.pin != "" { // behind a transaction-pooling proxy (pooler.go); SET takes no snapshot
		begin += "; " + d.pin
	}
	if limit := d.pendingLimit(); limit != "" { // a bulk load's cleaner merges the search indexes (bulk.go)
		begin += "; " + limit
	}
	if exclusive {
		begin += "; LOCK TABLE sessions IN EXCLUSIVE MODE" // takes no snapshot: the next statement does
	}
	tx, err := conn.BeginTx(pctx, pgx.TxOptions{BeginQuery: begin})
	if err != nil {
		return lostIfClosed(pctx, conn, err)
	}
	err = d.guard.check(pctx, tx)
	if err == nil {
		err = fn(pctx, pgExecutor{executor: executor{q: queries, db: tx}, bulk: &d.bulk})
	}
	if err != nil {
		rollback(ctx, tx) // the error that made fn fail is the one to report
		return lostIfClosed(pctx, conn, err)
	}
	commitStart := time.Now()
	if err := tx.Commit(pctx); err != nil {
		if serverRolledBack(err) {
			return err
		}
		return fmt.Errorf("%w: %w", driver.ErrCommitUnknown, err)
	}
	d.commitDuration.Observe(time.Since(commitStart))
	return nil
}

// lostBeforeCommit is a write whose connection died (or never came: the
// server was unreachable) before COMMIT was sent. The server aborts a
// transaction whose session ends, so nothing of it committed, and Write
// runs fn again on another connection — the server restarting, a proxy
// or a network cutting idle connections cost a rerun, not an error.
type lostBeforeCommit struct{ err error }

func (e *lostBeforeCommit) Error() string { return e.err.Error() }
func (e *lostBeforeCommit) Unwrap() error { return e.err }

// lostIfClosed marks err a lostBeforeCommit when the connection is gone
// and the call's own context is not why.
func lostIfClosed(pctx context.Context, conn *pgxpool.Conn, err error) error {
	if conn.Conn().IsClosed() && pctx.Err() == nil {
		return &lostBeforeCommit{err}
	}
	return err
}

// rollbackBound bounds a rollback, which runs even when the call's
// context has ended (so the connection goes back clean): a server that
// does not answer must not hold the caller past it. pgx closes a
// connection whose rollback failed, and the pool drops it.
const rollbackBound = 2 * time.Second

func rollback(ctx context.Context, tx pgx.Tx) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackBound)
	defer cancel()
	_ = tx.Rollback(rctx) // after Commit, a no-op
}

// backoff is how long a rerun waits after attempt failed: jittered and
// growing, so transactions that collided do not collide again in step.
func backoff(attempt int) time.Duration {
	ceiling := time.Millisecond << min(attempt, 6) // up to 64 ms
	return ceiling/2 + rand.N(ceiling/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Snapshot runs fn in one REPEATABLE READ READ ONLY transaction: every
// statement sees the snapshot its first one took.
func (d pgDriver) Snapshot(ctx context.Context, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	return d.cause(ctx, d.snapshot(ctx, func(tx pgx.Tx) error { return fn(ctx, pgExecutor{executor: executor{q: queries, db: tx}}) }))
}

func (d pgDriver) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	var tx pgx.Tx
	err := d.reconnecting(ctx, time.Now().Add(d.readPatience), func(pool *pgxpool.Pool, pin string) (err error) {
		opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
		if pin != "" { // behind a transaction-pooling proxy (pooler.go); SET takes no snapshot
			opts = pgx.TxOptions{BeginQuery: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; " + pin}
		}
		tx, err = pool.BeginTx(ctx, opts)
		return err
	})
	if err != nil {
		return err
	}
	return runReadTx(ctx, tx, fn)
}

// reconnecting runs begin on the read's pool (the primary, or a replica:
// readroute.go) until it gets a connection, again while the server is
// unreachable (restarting, shutting down: unreachable) until deadline (the
// store's write patience from the read's start); past it, a *LockedError
// saying so. begin only acquires a connection (and begins a transaction on
// it), so nothing of the read has run yet and running it again repeats
// nothing. A replica that is unreachable hands the read to the primary,
// which has every write.
func (d pgDriver) reconnecting(ctx context.Context, deadline time.Time, begin func(pool *pgxpool.Pool, pin string) error) error {
	pool, pin := d.readPool(ctx)
	for attempt := 0; ; attempt++ {
		err := begin(pool, pin)
		if err == nil || !unreachable(err) || ctx.Err() != nil || d.closed.Load() {
			return err
		}
		if pool != d.pool {
			pool, pin = d.pool, d.pin
			continue
		}
		if time.Now().After(deadline) {
			return &LockedError{Schema: d.schema, Patience: d.readPatience, Err: err}
		}
		if sleep(ctx, reconnectBackoff(attempt)) != nil {
			return err
		}
	}
}

// runReadTx runs fn in tx, a read transaction, and ends it.
func runReadTx(ctx context.Context, tx pgx.Tx, fn func(pgx.Tx) error) error {
	defer rollback(ctx, tx)
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// attempt runs batch in one transaction. It returns the requests to run
// again, with why (err) when the whole transaction was rolled back for a
// reason a rerun may cure; undone reports a caller's failure in a batch
// without savepoints, which then runs again careful, the failing caller
// too.
//
// A leader's batch (aside false) hands the appends whose session another
// transaction holds to runAside and goes on without them; the batch
// runAside runs (aside true) waits for the locks.
func (a *appender) attempt(batch []*appendRequest, careful, aside bool) (replay []*appendRequest, err error, undone bool) {
	first, last := earliest(batch), latest(batch)
	// The pool's connection, with the patience of the most patient caller:
	// an unreachable server is rerun until then, each caller expiring on
	// its own. Close cancels it (appender.close).
	actx, cancel := context.WithDeadline(a.stop, last)
	defer cancel()
	conn, err := a.eng.pool.Acquire(actx)
	if err != nil {
		if a.eng.closed.Load() {
			finishAppends(batch, appendResult{err: driver.ErrClosed})
			return nil, nil, false
		}
		return batch, err, false
	}
	defer conn.Release()
	c := conn.Conn()
	if !careful && !aside {
		if replay, err, undone, sent := a.oneRound(actx, c, batch, first, last); sent {
			return replay, err, undone
		}
	}
	locked, exist, err := begin(actx, c, a.eng.guard, a.eng.pin, a.eng.pendingLimit(), batch, first, last, aside, careful)
	if err != nil {
		rollbackConn(c)
		if err := mapError(err); errors.Is(err, driver.ErrForeignSchema) { // no rerun cures it
			finishAppends(batch, appendResult{err: err})
			return nil, nil, false
		}
		return batch, lostOr(c, err), false
	}
	if err := prepareOneRound(actx, c); err != nil {
		rollbackConn(c)
		return batch, lostOr(c, err), false
	}
	if held := heldElsewhere(batch, locked, exist); len(held) > 0 {
		a.runAside(held)
		batch = slices.DeleteFunc(slices.Clone(batch), func(r *appendRequest) bool { return slices.Contains(held, r) })
		if len(batch) == 0 {
			rollbackConn(c)
			return nil, nil, false
		}
	}
	var ok []*appendRequest
	var riding *commitRiders // for the COMMIT's round (deferred.go)
	if careful || len(batch) == 1 {
		// A lone append that did not go in one round trip (oneround.go)
		// runs alone: on the pipeline, its statements riding the COMMIT,
		// it ran 0.75-0.8x as fast (docs/PERFORMANCE.md).
		ok, replay, err = a.runOneByOne(actx, c, batch, len(batch) > 1)
	} else {
		ok, replay, err, undone, riding = a.runPipelined(actx, c, batch, locked)
	}
	if len(replay) > 0 || len(ok) == 0 {
		rollbackConn(c)
		return slices.Concat(ok, replay), err, undone
	}
	return a.commit(c, ok, last, careful, riding)
}

// errSwallowed answers a caller whose callback returned no error although
// a statement of it failed (the server then aborts the transaction, and
// every later statement and the COMMIT would fail or roll back): its
// changes are undone, the other callers' stand. A callback of the store
// never does this; the engine does not trust that it never will.
var errSwallowed = errors.New("pg: a statement of the append failed but its callback returned no error; nothing of it was written")

// aborted reports a transaction the server has aborted: a statement
// failed in it (or in the current savepoint) and it accepts nothing but a
// rollback.
func aborted(c *pgx.Conn) bool { return c.PgConn().TxStatus() == 'E' }

// runOneByOne runs the batch's appends one after another, each in a
// savepoint when savepoints, so a failing caller undoes only its own
// changes and gets its error; without savepoints the batch must be one
// caller alone in its transaction, which a failure rolls back. It returns
// the requests whose changes stand and, after the transaction was lost or
// rolled back for a reason a rerun may cure, the ones to run again.
func (a *appender) runOneByOne(ctx context.Context, c *pgx.Conn, batch []*appendRequest, savepoints bool) (ok, replay []*appendRequest, err error) {
	ex := pgExecutor{executor: executor{q: queries, db: c}}
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil { // gave up before its turn: nothing of it ran
			r.respond(appendResult{err: err})
			continue
		}
		if savepoints {
			if _, err := c.Exec(ctx, "SAVEPOINT sessiondb_append"); err != nil {
				return nil, slices.Concat(ok, batch[i:]), lostOr(c, err)
			}
		}
		ferr, panicked := runAppend(ctx, r, ex)
		if ferr == nil && panicked == nil && aborted(c) {
			ferr = errSwallowed // a statement failed; its callback said nothing
		}
		if ferr == nil && panicked == nil {
			if savepoints {
				if _, err := c.Exec(ctx, "RELEASE sessiondb_append"); err != nil {
					return nil, slices.Concat(ok, batch[i:]), lostOr(c, err)
				}
			}
			ok = append(ok, r)
			continue
		}
		if c.IsClosed() || wholeTransaction(ferr) {
			// The connection is gone, or the server rolled back for a
			// reason a rerun may cure (a deadlock, a lock wait past the
			// least patient caller's patience): nothing of the batch
			// stands, everyone runs again.
			return nil, slices.Concat(ok, batch[i:]), lostOr(c, ferr)
		}
		if savepoints {
			if _, err := c.Exec(ctx, "ROLLBACK TO sessiondb_append; RELEASE sessiondb_append"); err != nil {
				return nil, slices.Concat(ok, batch[i:]), lostOr(c, err)
			}
		} else { // alone in its transaction (attempt): undo it all
			rollbackConn(c)
		}
		r.respond(appendResult{err: pgDriver{a.eng}.cause(r.ctx, ferr), panicked: panicked})
	}
	return ok, nil, nil
}

// commit commits the requests whose changes stand and answers them. A
// COMMIT is never cut short by a caller's context: that would turn a
// clean write into an unknown one. It is bounded all the same, by the
// most patient caller or commitBound, whichever is later, so a server
// that stops answering ends in ErrCommitUnknown.
//
// A COMMIT the server answers with an error (or ROLLBACK) committed
// nothing, and its cause is no single caller's to own: a transaction
// found aborted or failing at COMMIT (a deferred constraint a DBA added,
// a callback that hid a failed statement) runs again careful — each
// caller in a savepoint with constraints checked at once (begin), so a
// caller's own failure is answered to it alone, as at any statement.
// Failing again when careful (the server's own reason: a serialization
// failure, ...), the batch runs again as it is
// until each caller's patience ends: *LockedError wrapping the server's
// error (ErrLocked: nothing was written, resend). No caller gets the
// server's raw error from a COMMIT.
//
// riding, when set, are the appends' INSERTs and counter updates that
// ride the COMMIT (deferred.go): sent first in its round trip, any
// failure among them aborts the transaction before its COMMIT, and the
// batch runs again.
func (a *appender) commit(c *pgx.Conn, ok []*appendRequest, last time.Time, careful bool, riding *commitRiders) (replay []*appendRequest, err error, undone bool) {
	if aborted(c) {
		// A callback hid a failed statement: COMMIT would roll back.
		// Careful, each caller's statements are checked (runOneByOne).
		return ok, nil, true
	}
	if c.PgConn().TxStatus() != 'T' {
		// The transaction is not open (a bug: every path that rolls back
		// returns before here). COMMIT would answer "COMMIT" with nothing
		// committed; nothing was, so everyone runs again.
		return ok, errors.New("pg: the batch's transaction closed before COMMIT"), false
	}
	cctx, cancel := context.WithDeadline(context.Background(), maxTime(last, time.Now().Add(commitBound)))
	defer cancel()
	commitStart := time.Now()
	if riding != nil {
		return a.commitWithRiders(cctx, c, ok, careful, riding, commitStart)
	}
	// The COMMIT and, after it, the NOTIFY in a transaction of its own
	// (commitAndNotify): the callers are answered at the COMMIT's result,
	// the NOTIFY's read after.
	results := c.PgConn().Exec(cctx, a.commitAndNotify)
	var tag pgconn.CommandTag
	if results.NextResult() {
		tag, err = results.ResultReader().Close()
	}
	if !(err == nil && tag.String() == "COMMIT") {
		if closeErr := results.Close(); err == nil {
			err = closeErr
		}
	}
	return a.committed(ok, careful, tag, err, results.Close, commitStart)
}

// committed answers the callers of a COMMIT by its result (tag, err);
// rest reads what the round carried after the COMMIT.
func (a *appender) committed(ok []*appendRequest, careful bool, tag pgconn.CommandTag, err error, rest func() error, commitStart time.Time) (replay []*appendRequest, _ error, undone bool) {
	switch {
	case err == nil && tag.String() == "COMMIT":
		a.eng.commitDuration.Observe(time.Since(commitStart))
		a.batches.Add(1)
		a.appends.Add(int64(len(ok)))
		a.eng.route.wrote.Add(1) // before the callers read: readroute.go
		finishAppends(ok, appendResult{})
		if err := rest(); err != nil {
			// Committed and answered; only the watchers' wake-up is
			// lost, and their safety wake (watch.go) reads it later.
			a.eng.logger.Warn("sessiondb: the NOTIFY after an append's COMMIT failed", "err", err)
		}
	case err == nil: // ROLLBACK: the transaction had failed (never expected here)
		return ok, errors.New("the server rolled the transaction back at COMMIT"), !careful
	case serverRolledBack(err) && (retryable(err) || careful):
		return ok, err, false
	case serverRolledBack(err):
		return ok, nil, true
	default:
		finishAppends(ok, appendResult{err: fmt.Errorf("%w: %w", driver.ErrCommitUnknown, err)})
	}
	return nil, nil, false
}

// commitWithRiders is commit's round when the lanes left riders: they go
// first, then the COMMIT, then the batch's NOTIFY in a transaction of its
// own that does not wait for its flush (commitAndNotify says why), all in
// one pgx.Batch, where an error skips every statement after it, the
// COMMIT too. A rider the server refused (a session counted nothing; a
// row a constraint refused) rolls the transaction back, and the batch
// runs again careful (a batch with riders never is), or as it was when a
// rerun may cure it (a lock or statement timeout, a serialization
// failure). One the server ended the connection at (FATAL) skipped the
// COMMIT too: nothing committed, the batch runs again. Any other failure
// to read their answers leaves the COMMIT's outcome unknown
// (ErrCommitUnknown), as at the COMMIT itself.
func (a *appender) commitWithRiders(ctx context.Context, c *pgx.Conn, ok []*appendRequest, careful bool, h *commitRiders, commitStart time.Time) (replay []*appendRequest, err error, undone bool) {
	var b pgx.Batch
	a.queueCommit(&b, h)
	return a.readCommit(c, c.SendBatch(ctx, &b), ok, careful, h, commitStart)
}

// queueCommit queues the riders h, the COMMIT, and the batch's NOTIFY in a
// transaction of its own (commitWithRiders).
func (a *appender) queueCommit(b *pgx.Batch, h *commitRiders) {
	for _, o := range h.stmts {
		b.Queue(o.sql, o.args...)
	}
	b.Queue("COMMIT")
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit = off")
	b.Queue(a.eng.notify)
	b.Queue("COMMIT")
}

// readCommit reads what queueCommit queued and answers the callers
// (commitWithRiders says how); commitStart is when the round was sent.
func (a *appender) readCommit(c *pgx.Conn, res pgx.BatchResults, ok []*appendRequest, careful bool, h *commitRiders, commitStart time.Time) (replay []*appendRequest, err error, undone bool) {
	for _, o := range h.stmts {
		o.read(res)
	}
	if err := h.firstErr(); err != nil {
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
		if wholeTransaction(err) {
			return ok, err, false
		}
		return ok, nil, true
	}
	for _, s := range h.all {
		s.handIDs() // before the COMMIT's answer, which answers the callers
	}
	tag, err := res.Exec()
	return a.committed(ok, careful, tag, err, res.Close, commitStart)
}

// commitInOneRound sends a batch whose appends' statements all ride
// (oneround.go) in one round trip: begin's statements, with the guard and
// the sessions' locks checked on the server — the guard reads what it
// read when it last found nothing (schemaGuard.unchanged), every session
// is locked (lockEverySession) — or the statement fails; then the riders,
// the COMMIT and the NOTIFY as commitWithRiders sends them. sent is false
// when the transaction failed before the riders: the guard read something
// new, a session is held elsewhere or missing. The transaction was rolled
// back with nothing written, and the batch goes the way of two round
// trips, which tells each case apart. A connection lost before those
// answers is a connection lost with the COMMIT sent (commitWithRiders).
func (a *appender) commitInOneRound(c *pgx.Conn, ok []*appendRequest, h *commitRiders, clean *cleanGuard, first, last time.Time) (replay []*appendRequest, err error, undone, sent bool) {
	ids := make([]string, 0, len(ok))
	for _, r := range ok {
		ids = append(ids, r.sessionID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var b pgx.Batch
	setup := queueBegin(&b, a.eng.pin, a.eng.pendingLimit(), first, last, false)
	b.Queue(a.eng.guard.lockTables)
	b.Queue(a.eng.guard.unchanged, clean.fingerprint, clean.rows)
	b.Queue(lockEverySession, ids, len(ids))
	a.queueCommit(&b, h)
	if a.prepares {
		if missing := unprepared(c, &b); len(missing) > 0 {
			c.PgConn().CustomData()[oneRoundWanted] = missing
			return nil, nil, false, false // prepared by the next batch's transaction on c
		}
	}
	// The whole round is bounded as a COMMIT is (commit): once it is
	// sent, the COMMIT in it must be read.
	cctx, cancel := context.WithDeadline(context.Background(), maxTime(last, time.Now().Add(commitBound)))
	defer cancel()
	commitStart := time.Now()
	res := c.SendBatch(cctx, &b)
	for range setup + 3 {
		if _, err = res.Exec(); err != nil {
			_ = res.Close()
			var pgErr *pgconn.PgError
			switch {
			case errors.As(err, &pgErr) && pgErr.Severity == "ERROR":
				// The transaction failed there: nothing after it ran.
				a.oneRoundsChecked.Add(1)
				rollbackConn(c)
				return nil, nil, false, false
			case errors.As(err, &pgErr) || pgconn.SafeToRetry(err) || errors.As(err, new(pgx.ErrPreprocessingBatch)):
				// The server ended the session there, or nothing was sent.
				rollbackConn(c)
				return ok, &lostBeforeCommit{err}, false, true
			default:
				// The COMMIT was sent and may have run.
				finishAppends(ok, appendResult{err: fmt.Errorf("%w: %w", driver.ErrCommitUnknown, err)})
				return nil, nil, false, true
			}
		}
	}
	a.oneRounds.Add(1)
	replay, err, undone = a.readCommit(c, res, ok, false, h, commitStart)
	return replay, err, undone, true
}

// A batch in one round trip runs statements prepared by name (Conn.Prepare
// with the SQL as the name, which pgx's batches use without preparing
// again): otherwise pgx would prepare them in a round trip of its own
// before the batch, outside its transaction, where a parse waits without
// the batch's lock_timeout for a table another session holds (a DBA's
// LOCK, an ALTER TABLE). A connection's prepared statements are in its
// CustomData: oneRoundPrepared, the set; oneRoundWanted, those a batch
// lacked, which the next batch on the connection prepares inside the
// transaction begin opened (prepareOneRound), whose ROW EXCLUSIVE lock on
// every table of the store lets no parse wait for another session.
const (
	oneRoundPrepared = "sessiondb.oneround.prepared"
	oneRoundWanted   = "sessiondb.oneround.wanted"
	// oneRoundOff marks a connection a preparation failed on: its batches
	// take two round trips, so that a statement the server refuses (a
	// column a DBA dropped) fails where each caller gets its answer.
	oneRoundOff = "sessiondb.oneround.off"
)

// unprepared lists b's statements not yet prepared on c by name.
func unprepared(c *pgx.Conn, b *pgx.Batch) (missing []string) {
	have, _ := c.PgConn().CustomData()[oneRoundPrepared].(map[string]bool)
	for _, q := range b.QueuedQueries {
		if !have[q.SQL] && !slices.Contains(missing, q.SQL) {
			missing = append(missing, q.SQL)
		}
	}
	return missing
}

// prepareOneRound prepares, inside the transaction begin opened on c, the
// statements a batch in one round trip lacked there (unprepared).
func prepareOneRound(ctx context.Context, c *pgx.Conn) error {
	data := c.PgConn().CustomData()
	wanted, _ := data[oneRoundWanted].([]string)
	if len(wanted) == 0 {
		return nil
	}
	have, _ := data[oneRoundPrepared].(map[string]bool)
	if have == nil {
		have = map[string]bool{}
		data[oneRoundPrepared] = have
	}
	delete(data, oneRoundWanted)
	for _, sql := range wanted {
		if _, err := c.Prepare(ctx, sql, sql); err != nil {
			data[oneRoundOff] = true
			return fmt.Errorf("prepare a batch's statements: %w", err)
		}
		have[sql] = true
	}
	return nil
}

// commitBound is the least a COMMIT may wait for the server's answer.
const commitBound = 10 * time.Second

// lockSessions locks the batch's session rows, in id order so that two
// batches (of two processes) never wait for each other in a cycle. FOR NO
// KEY UPDATE is the lock the counter UPDATE takes anyway, taken first:
// appends to one session are serial from their idempotency lookup on, and
// it does not block other transactions' foreign-key checks (FOR KEY
// SHARE). A leader's batch skips rows another transaction holds
// (lockSessionsNow): one held session must not stall the others. The
// sessions that exist are read in the same round trip, which tells a
// held session (run apart, waiting: runAside) from a missing one (its
// append fails with ErrNotFound). Hand-written: it is the engine's
// transaction mechanics, not a domain query (the two engines' query sets
// match one for one).
const (
	lockSessions    = `SELECT id FROM sessions WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`
	lockSessionsNow = lockSessions + ` SKIP LOCKED`
	// lockEverySession is lockSessionsNow that fails, dividing by zero,
	// unless it locked every session of $1 ($2 of them): the batch sent in
	// one round trip (commitInOneRound) has no round to tell a held
	// session from a missing one.
	lockEverySession = `SELECT 1 / (count(*) = $2)::int FROM (` + lockSessionsNow + `) AS l`
	existingSessions = `SELECT id FROM sessions WHERE id = ANY($1)`
)

// begin opens the batch's transaction and locks its sessions in one
// round trip, and returns which sessions it locked and which exist (those
// neither are missing; those only existing are held elsewhere). Unless
// wait, rows other transactions hold are skipped. lock_timeout is the
// least patient caller's patience left, so a lock held elsewhere rolls
// the batch back in time to answer it (LockedError) and run the others
// again; statement_timeout is the most patient's.
//
// The store's tables are locked in ROW EXCLUSIVE mode first and the
// schema guard's catalog read goes in the same round trip, as Write does
// (guard.go): a trigger, rule or policy planted since the store opened is
// refused (ErrForeignSchema) before the batch writes anything.
//
// A careful batch checks deferred constraints at each statement (SET
// CONSTRAINTS ALL IMMEDIATE), so one that fails is its caller's, inside
// the caller's savepoint, not the whole batch's at COMMIT (commit).
// limit, when set, is the statement that lets the search indexes'
// pending lists grow while a bulk load's cleaner merges them (bulk.go).
func begin(ctx context.Context, c *pgx.Conn, guard *schemaGuard, pin, limit string, batch []*appendRequest, first, last time.Time, wait, careful bool) (locked, exist map[string]bool, err error) {
	ids := make([]string, 0, len(batch))
	for _, r := range batch {
		ids = append(ids, r.sessionID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	lock := lockSessionsNow
	if wait {
		lock = lockSessions
	}
	var b pgx.Batch
	setup := queueBegin(&b, pin, limit, first, last, careful) + 1 // and the tables' lock
	b.Queue(guard.lockTables)
	b.Queue(guard.query)
	b.Queue(lock, ids)
	if !wait {
		b.Queue(existingSessions, ids)
	}
	res := c.SendBatch(ctx, &b)
	locked = make(map[string]bool, len(ids))
	exist = locked
	for range setup {
		if err == nil {
			_, err = res.Exec()
		}
	}
	if err == nil {
		var found []string
		if found, err = guard.hazards(ctx, batchRows{res}); err == nil && len(found) > 0 {
			err = hazardError(guard.schema, found)
		}
	}
	if err == nil {
		err = readIDs(res, locked)
	}
	if err == nil && !wait {
		exist = make(map[string]bool, len(ids))
		err = readIDs(res, exist)
	}
	if cerr := res.Close(); err == nil {
		err = cerr
	}
	return locked, exist, err
}

// queueBegin queues a batch's BEGIN and its settings (begin says which),
// and returns how many statements it queued.
func queueBegin(b *pgx.Batch, pin, limit string, first, last time.Time, careful bool) (queued int) {
	b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
	queued = 2     // BEGIN, the settings
	if pin != "" { // behind a transaction-pooling proxy (pooler.go)
		b.Queue(pin)
		queued++
	}
	b.Queue("SELECT set_config('lock_timeout', $1, true), set_config('statement_timeout', $2, true), set_config('sessiondb.counts_last_message_at', 'on', true)",
		fmt.Sprint(max(time.Until(first).Milliseconds(), 1)), fmt.Sprint(max(time.Until(last).Milliseconds(), 1)))
	if careful {
		b.Queue("SET CONSTRAINTS ALL IMMEDIATE")
		queued++
	}
	if limit != "" { // a bulk load's cleaner merges the search indexes (bulk.go)
		b.Queue(limit)
		queued++
	}
	return queued
}

// batchRows hands the guard the next result of a batch as its query's.
type batchRows struct{ res pgx.BatchResults }

func (b batchRows) Query(context.Context, string, ...any) (pgx.Rows, error) { return b.res.Query() }

func readIDs(res pgx.BatchResults, into map[string]bool) error {
	rows, err := res.Query()
	if err != nil {
		return err
	}
	var id string
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error { into[id] = true; return nil })
	return err
}

// rollbackConn ends the connection's transaction, if any is open. A
// connection whose rollback fails is closed, so the pool drops it.
func rollbackConn(c *pgx.Conn) {
	if c.IsClosed() || c.PgConn().TxStatus() == 'I' {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), rollbackBound)
	defer cancel()
	if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
		cctx, ccancel := context.WithTimeout(context.Background(), rollbackBound)
		defer ccancel()
		_ = c.Close(cctx)
	}
}

// migrationTx runs fn in one transaction on one pooled connection that
// first takes the migration lock key, a transaction-level advisory lock:
// it ends with the transaction, whatever ends it (migrate.go).
func migrationTx(ctx context.Context, pool *pgxpool.Pool, key int64, fn func(pgx.Tx) error) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: connect: %w", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer rollback(ctx, tx)
	// Hand-written: advisory locks are no query of the store's schema.
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", key); err != nil {
		return fmt.Errorf("migrate: take the migration lock: %w", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migrate: commit: %w", err)
	}
	return nil
}

// migrationSavepoint is a transaction goose begins inside the migration
// transaction (migratetx.go): a savepoint, released at its commit.
func migrationSavepoint(ctx context.Context, tx pgx.Tx) (pgx.Tx, error) {
	return tx.Begin(ctx)
}

// currentSchema reads current_schema() as the store's statements will
// see it: on a pooled connection, or behind a transaction-pooling proxy
// in a transaction that first runs pin (pinSchema).
func currentSchema(ctx context.Context, pool *pgxpool.Pool, pin string) (*string, error) {
	var current *string
	if pin == "" {
		err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&current)
		return current, err
	}
	err := pinnedRead(ctx, pool, pin, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT current_schema()").Scan(&current)
	})
	return current, err
}

// pinnedRead runs fn in a READ COMMITTED transaction that first runs pin
// (pinSchema): a Read behind a transaction-pooling proxy, where a
// statement outside a transaction could run on a server connection set
// up for anyone. Each statement still sees what is committed when it
// starts, as a Read on the pool does.
func pinnedRead(ctx context.Context, pool *pgxpool.Pool, pin string, fn func(pgx.Tx) error) error {
	tx, err := beginPinned(ctx, pool, pin)
	if err != nil {
		return err
	}
	return runReadTx(ctx, tx, fn)
}

func beginPinned(ctx context.Context, pool *pgxpool.Pool, pin string) (pgx.Tx, error) {
	return pool.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN ISOLATION LEVEL READ COMMITTED; " + pin})
}

// keepHolders begins the transaction a keeper's connection holds open
// behind a transaction-pooling proxy: the holders' advisory locks are
// then a transaction's, and the proxy keeps the server connection for it
// until the keeper closes (holder.go).
func keepHolders(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "BEGIN")
	return err
}

// holdInKeeperTx takes a holder's transaction-level advisory lock in the
// keeper's open transaction (keepHolders), inside a savepoint: a lock
// that fails (a canceled call) rolls back only its savepoint, and the
// other holders' locks stay. The key is a number, written into the text
// so the three statements go in one round trip.
func holdInKeeperTx(ctx context.Context, conn *pgx.Conn, key int64) error {
	_, err := conn.Exec(ctx, fmt.Sprintf("SAVEPOINT sessiondb_holder; SELECT pg_advisory_xact_lock(%d); RELEASE sessiondb_holder", key))
	if err == nil {
		return nil
	}
	if conn.IsClosed() {
		return err
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackBound)
	defer cancel()
	if _, rerr := conn.Exec(rctx, "ROLLBACK TO SAVEPOINT sessiondb_holder; RELEASE sessiondb_holder"); rerr != nil {
		// The transaction is lost, and the holders' locks with it: close
		// the connection, so the next NewHolder starts afresh.
		_ = conn.Close(rctx)
		return fmt.Errorf("%w (and its savepoint: %v)", err, rerr)
	}
	return err
}
