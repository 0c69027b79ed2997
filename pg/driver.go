package pg

import (
	"context"
	"log/slog"
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

// engine is the PostgreSQL engine behind a Store. A plain append runs in
// a READ COMMITTED transaction shared with the process's concurrent
// appends, its session's row locked first (WriteAppend, appendbatch.go).
// Every other write is one SERIALIZABLE transaction on a pooled
// connection: the domain's rules (read a row, decide, write) were written
// for SQLite's single writer, and SERIALIZABLE gives them the same
// guarantee — the server aborts one of two transactions that would
// interleave, and Write reruns it. Which rule each choice protects:
// docs/ARCHITECTURE.md, "PostgreSQL: appends in shared transactions".
type engine struct {
	pool    *pgxpool.Pool
	ownPool bool // Open made the pool, so Close closes it
	schema  string
	// pin sets a transaction's search_path behind a transaction-pooling
	// proxy, which every transaction then runs first; "" otherwise
	// (pooler.go).
	pin     string
	trusted []string // Options.TrustedOwners, for Verify
	// readPatience bounds how long a read waits for an unreachable server
	// to answer again (a restart): the store's write patience.
	readPatience time.Duration
	// guard checks every write for objects that run inside it, after its
	// BEGIN locked the tables (guard.go).
	guard  *schemaGuard
	closed atomic.Bool
	keeper keeper // the advisory locks of the holders NewHolder made
	// appends is the group commit of plain appends (appendbatch.go).
	appends *appender
	// bulk is the bulk loads under way and their pending-list cleaner
	// (bulk.go).
	bulk bulkLoads
	// changes wakes the store's watchers; notify announces a write's
	// commit to every other handle's (watch.go).
	changes        *changefeed.Hub
	notify         string
	watchByPolling bool
	logger         *slog.Logger

	// readOnly, when set, is why the store was opened read-only (a hot
	// standby, Options.ReadOnly): every write returns it (readonly.go).
	readOnly error
	standby  bool
	// migration is what Open's migrate step did (zero when it did not
	// migrate); MigrateStore reports it.
	migration Migration

	// route sends reads to Options.Replicas (readroute.go).
	route readRoute

	// counters are what Metrics reports (metrics.go).
	counters
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
	d.appends.close()
	d.bulk.close()
	d.keeper.close()
	if d.ownPool {
		d.pool.Close()
	}
	for _, r := range d.route.replicas {
		r.pool.Close()
	}
	return nil
}

// Read runs fn on one of the pool's connections: each statement sees
// committed data.
func (d pgDriver) Read(ctx context.Context, fn func(context.Context, driver.Executor) error) error {
	if d.closed.Load() {
		return driver.ErrClosed
	}
	// One connection for the whole read, acquired before fn runs, so a
	// server restarting under it costs a wait, not an error (reconnecting),
	// and so does a connection the restart broke, found at the read's
	// first statement (readConn).
	deadline := time.Now().Add(d.readPatience)
	for {
		var conn *pgxpool.Conn
		var tx pgx.Tx
		err := d.reconnecting(ctx, deadline, func(pool *pgxpool.Pool, pin string) (err error) {
			if pin != "" { // behind a transaction-pooling proxy (pooler.go)
				tx, err = beginPinned(ctx, pool, pin)
				return err
			}
			conn, err = pool.Acquire(ctx)
			return err
		})
		switch {
		case err != nil:
			return d.cause(ctx, err)
		case tx != nil:
			return d.cause(ctx, runReadTx(ctx, tx, func(tx pgx.Tx) error {
				return fn(ctx, pgExecutor{executor: executor{q: queries, db: tx}})
			}))
		}
		rc := &readConn{conn: conn}
		err = fn(ctx, pgExecutor{executor: executor{q: queries, db: rc}})
		conn.Release()
		if err == nil || rc.answered || !unreachable(err) || ctx.Err() != nil || d.closed.Load() {
			return d.cause(ctx, err)
		}
		if time.Now().After(deadline) {
			return &LockedError{Schema: d.schema, Patience: d.readPatience, Err: err}
		}
	}
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
// the engine's answer to whether a lease holder is gone (holder.go), its
// bulk import (importbatch.go) and an append's rows in one statement
// (insertbatch.go). bulk is set on write transactions:
// their COPYs wake a bulk load's cleaner (bulk.go).
type pgExecutor struct {
	executor
	bulk *bulkLoads
}
