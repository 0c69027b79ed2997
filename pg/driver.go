package pg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sessiondb/sessiondb/internal/changefeed"
	"github.com/sessiondb/sessiondb/pg/internal/pggen"
	"github.com/sessiondb/sessiondb/store/driver"
)

// queries is sqlc's stateless query set; every call names its connection.
var queries = pggen.New()

// engine is the PostgreSQL engine behind a Store. Every write is one
// SERIALIZABLE transaction on a pooled connection: the domain's rules
// (read a row, decide, write) were written for SQLite's single writer,
// and SERIALIZABLE gives them the same guarantee — the server aborts one
// of two transactions that would interleave, and Write reruns it.
type engine struct {
	pool    *pgxpool.Pool
	ownPool bool // Open made the pool, so Close closes it
	schema  string
	trusted []string // Options.TrustedOwners, for Verify
	// guard checks every write for objects that run inside it, after its
	// BEGIN locked the tables (guard.go).
	guard  *schemaGuard
	closed atomic.Bool
	keeper keeper // the advisory locks of the holders NewHolder made
	// changes wakes the store's watchers; notify announces a write's
	// commit to every other handle's (watch.go).
	changes        *changefeed.Hub
	notify         string
	watchByPolling bool
	logger         *slog.Logger
}

// pgDriver is the engine as the domain sees it. It is a type of its own so
// the driver's methods are not promoted onto Store, which holds the
// engine.
type pgDriver struct{ *engine }

var _ driver.Driver = pgDriver{}

// Close releases the holders' advisory locks and closes the pool when
// Open made it; a pool given to OpenPool stays its owner's.
func (d pgDriver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.changes.Close(driver.ErrClosed)
	d.keeper.close()
	if d.ownPool {
		d.pool.Close()
	}
	return nil
}

// Write runs fn in one SERIALIZABLE transaction within patience, which
// bounds every wait: the pool's connection, the server's locks
// (lock_timeout) and each statement (statement_timeout) get what is left
// of it. A serialization failure or deadlock, which the server reports
// after rolling the transaction back, reruns fn until patience runs out,
// as does a connection lost before COMMIT (lostBeforeCommit).
// A COMMIT that got no answer from the server (the connection lost, the
// context ended) is ErrCommitUnknown and never rerun.
func (d pgDriver) Write(ctx context.Context, patience time.Duration, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	deadline := time.Now().Add(patience)
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var err error
	for attempt := 0; ; attempt++ {
		if err = d.writeOnce(ctx, pctx, deadline, fn); err == nil {
			d.changes.Changed()
			return nil
		}
		var lost *lostBeforeCommit
		if !retryable(err) && !errors.As(err, &lost) || pctx.Err() != nil || sleep(pctx, backoff(attempt)) != nil {
			break
		}
	}
	if lost, ok := err.(*lostBeforeCommit); ok {
		err = lost.err
	}
	switch {
	case errors.Is(err, driver.ErrCommitUnknown):
		return err
	case gaveUpWaiting(ctx, pctx, err), retryable(err) && ctx.Err() == nil:
		return &LockedError{Schema: d.schema, Patience: patience, Err: err}
	case d.closed.Load():
		return driver.ErrClosed
	}
	return mapError(err)
}

func (d pgDriver) writeOnce(ctx, pctx context.Context, deadline time.Time, fn func(context.Context, driver.Executor) error) error {
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
	// The store's tables are locked with it, before the guard's snapshot,
	// and the commit's NOTIFY queued (watch.go), which the server sends
	// only if the transaction commits.
	ms := max(time.Until(deadline).Milliseconds(), 1)
	tx, err := conn.BeginTx(pctx, pgx.TxOptions{BeginQuery: fmt.Sprintf(
		"BEGIN ISOLATION LEVEL SERIALIZABLE; SET LOCAL lock_timeout = %d; SET LOCAL statement_timeout = %d; %s; %s", ms, ms, d.guard.lockTables, d.notify)})
	if err != nil {
		return lostIfClosed(pctx, conn, err)
	}
	err = d.guard.check(pctx, tx)
	if err == nil {
		err = fn(pctx, pgExecutor{executor{q: queries, db: tx}})
	}
	if err != nil {
		rollback(ctx, tx) // the error that made fn fail is the one to report
		return lostIfClosed(pctx, conn, err)
	}
	if err := tx.Commit(pctx); err != nil {
		if serverRolledBack(err) {
			return err
		}
		return fmt.Errorf("%w: %w", driver.ErrCommitUnknown, err)
	}
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

// Read runs fn on the pool: each statement sees committed data.
func (d pgDriver) Read(ctx context.Context, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	return d.cause(ctx, fn(ctx, pgExecutor{executor{q: queries, db: d.pool}}))
}

// Snapshot runs fn in one REPEATABLE READ READ ONLY transaction: every
// statement sees the snapshot its first one took.
func (d pgDriver) Snapshot(ctx context.Context, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	return d.cause(ctx, d.snapshot(ctx, func(tx pgx.Tx) error { return fn(ctx, pgExecutor{executor{q: queries, db: tx}}) }))
}

func (d pgDriver) snapshot(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer rollback(ctx, tx)
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// cause maps a read's error, reporting ErrClosed for one Close cut short
// and naming the server's own timeout when one canceled it.
func (d pgDriver) cause(ctx context.Context, err error) error {
	if err != nil && d.closed.Load() {
		return driver.ErrClosed
	}
	return mapError(explainTimeout(ctx, d.pool, err))
}

// pgExecutor is the engine's driver.Executor: the generated queries plus
// the engine's answer to whether a lease holder is gone (holder.go).
type pgExecutor struct{ executor }
